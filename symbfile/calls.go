package symbfile

import (
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/arch/arm/armasm"
	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/ppc64/ppc64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/gosym-dev/gosym/object"
)

// CallArchitectures are the architectures (GOARCH names) whose return
// pads Write finds: those whose call instructions golang.org/x/arch
// decodes. Write with WithReturnPads fails for the others.
var CallArchitectures = []string{"amd64", "386", "arm64", "arm", "ppc64", "ppc64le"}

// A callFinder appends to rets the address after each call instruction in
// code, which starts at address pc, in address order.
type callFinder func(code []byte, pc uint64, rets []uint64) []uint64

// callFinderFor returns the callFinder of arch, the GOARCH of obj.
//
// Instructions are decoded from the function's entry on, one after the
// other, as go tool objdump decodes them: bytes that are no instruction
// are skipped, 1 byte at a time on x86 and 4 on the others (whose
// instructions are all 4 bytes long in Go's code). On the fixed-width
// architectures, a word is decoded only if its bits can be a call.
func callFinderFor(arch string, obj object.Object) (callFinder, error) {
	switch arch {
	case "amd64", "386":
		mode := 64
		if arch == "386" {
			mode = 32
		}
		return func(code []byte, pc uint64, rets []uint64) []uint64 {
			return x86Calls(code, pc, mode, true, rets)
		}, nil
	case "arm64":
		return words(binary.LittleEndian, func(w uint32, b []byte) bool {
			// BL, BLR.
			if w&0xfc000000 != 0x94000000 && w&0xfffffc1f != 0xd63f0000 {
				return false
			}
			inst, err := arm64asm.Decode(b)
			return err == nil && (inst.Op == arm64asm.BL || inst.Op == arm64asm.BLR)
		}), nil
	case "arm":
		return words(binary.LittleEndian, func(w uint32, b []byte) bool {
			// BL (any condition), BLX immediate, BLX register.
			if w&0x0f000000 != 0x0b000000 && w&0xfe000000 != 0xfa000000 && w&0x0ffffff0 != 0x012fff30 {
				return false
			}
			inst, err := armasm.Decode(b, armasm.ModeARM)
			if err != nil || inst.Op == 0 {
				return false
			}
			op := inst.Op.String()
			return op == "BL" || op == "BLX" || strings.HasPrefix(op, "BL.") || strings.HasPrefix(op, "BLX.")
		}), nil
	case "ppc64", "ppc64le":
		order := obj.Endian()
		return words(order, func(w uint32, b []byte) bool {
			// Branches with LK = 1: I-form (bl), B-form (bcl), XL-form
			// to the count or link register (bcctrl, bclrl).
			if w&1 == 0 {
				return false
			}
			switch w >> 26 {
			case 16, 18:
			case 19:
				if xo := w >> 1 & 0x3ff; xo != 16 && xo != 528 {
					return false
				}
			default:
				return false
			}
			inst, err := ppc64asm.Decode(b, order)
			if err != nil {
				return false
			}
			switch inst.Op {
			case ppc64asm.BL, ppc64asm.BLA, ppc64asm.BCL, ppc64asm.BCLA, ppc64asm.BCCTRL, ppc64asm.BCLRL:
				return true
			}
			return false
		}), nil
	case "":
		return nil, fmt.Errorf("symbfile: cannot find return pads: unknown architecture")
	}
	return nil, fmt.Errorf("symbfile: cannot find return pads in %s code (only %s)", arch, strings.Join(CallArchitectures, ", "))
}

// x86Calls is the callFinder of x86 in mode 64 or 32, with the fast path
// for common instructions (x86len.go) if fast is true.
func x86Calls(code []byte, pc uint64, mode int, fast bool, rets []uint64) []uint64 {
	for i := 0; i < len(code); {
		if fast {
			if n, call := x86Len(code[i:], mode); n > 0 {
				i += n
				if call {
					rets = append(rets, pc+uint64(i))
				}
				continue
			}
		}
		inst, err := x86asm.Decode(code[i:], mode)
		if err != nil || inst.Len == 0 || inst.Op == 0 {
			i++
			continue
		}
		i += inst.Len
		if inst.Op == x86asm.CALL || inst.Op == x86asm.LCALL {
			rets = append(rets, pc+uint64(i))
		}
	}
	return rets
}

// words returns the callFinder of an architecture of 4-byte instructions
// in byte order order, where isCall says whether the word w, whose bytes
// are b, is a call.
func words(order binary.ByteOrder, isCall func(w uint32, b []byte) bool) callFinder {
	return func(code []byte, pc uint64, rets []uint64) []uint64 {
		for i := 0; i+4 <= len(code); i += 4 {
			b := code[i : i+4]
			if isCall(order.Uint32(b), b) {
				rets = append(rets, pc+uint64(i)+4)
			}
		}
		return rets
	}
}
