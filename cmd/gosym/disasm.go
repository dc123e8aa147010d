package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"golang.org/x/arch/arm/armasm"
	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/ppc64/ppc64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

func runDisasm(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("disasm")
	b, pos, status := f.open(args, 2, 2, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()
	// An architecture disasm cannot decode is reported before FUNC is
	// looked up, so this is not openFunc.
	dec, err := decoderFor(b.obj)
	if err != nil {
		return errorf(stderr, "%s: %v", b.path, err)
	}
	fn, err := b.lookupFunc(pos[1])
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	text, err := textOf(b.obj, fn.Entry())
	if err != nil {
		return errorf(stderr, "%s: %v", b.path, err)
	}

	w := bufio.NewWriter(stdout)
	words := b.obj.Arch() != "amd64" && b.obj.Arch() != "386"
	err = disassemble(w, b.tab, fn, dec, words, text)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return errorf(stderr, "%s: %v", b.path, err)
	}
	return exitOK
}

// A decoder decodes the instruction at the start of code, at address pc,
// into Go assembler syntax and its size. It returns "?" and the minimum
// instruction size for bytes that are no instruction.
type decoder func(code []byte, pc uint64, lookup func(uint64) (string, uint64), text io.ReaderAt) (string, int)

// decoderFor returns the instruction decoder for obj's architecture.
func decoderFor(obj *object.File) (decoder, error) {
	switch arch := obj.Arch(); arch {
	case "amd64", "386":
		mode := 64
		if arch == "386" {
			mode = 32
		}
		return func(code []byte, pc uint64, lookup func(uint64) (string, uint64), _ io.ReaderAt) (string, int) {
			inst, err := x86asm.Decode(code, mode)
			if err != nil || inst.Len == 0 || inst.Op == 0 {
				return "?", 1
			}
			return x86asm.GoSyntax(inst, pc, lookup), inst.Len
		}, nil
	case "arm64":
		return func(code []byte, pc uint64, lookup func(uint64) (string, uint64), text io.ReaderAt) (string, int) {
			inst, err := arm64asm.Decode(code)
			if err != nil || inst.Op == 0 {
				return "?", 4
			}
			return arm64asm.GoSyntax(inst, pc, lookup, text), 4
		}, nil
	case "arm":
		return func(code []byte, pc uint64, lookup func(uint64) (string, uint64), text io.ReaderAt) (string, int) {
			inst, err := armasm.Decode(code, armasm.ModeARM)
			if err != nil || inst.Len == 0 || inst.Op == 0 {
				return "?", 4
			}
			return armasm.GoSyntax(inst, pc, lookup, text), inst.Len
		}, nil
	case "ppc64", "ppc64le":
		order := obj.Endian()
		return func(code []byte, pc uint64, lookup func(uint64) (string, uint64), _ io.ReaderAt) (string, int) {
			inst, err := ppc64asm.Decode(code, order)
			if err != nil || inst.Len == 0 {
				return "?", 4
			}
			return ppc64asm.GoSyntax(inst, pc, lookup), inst.Len
		}, nil
	case "":
		return nil, errors.New("cannot disassemble: unknown architecture")
	default:
		return nil, fmt.Errorf("cannot disassemble %s code (only amd64, 386, arm64, arm, ppc64 and ppc64le)", arch)
	}
}

// section is the contents of the section that holds some code, readable at
// link-time addresses.
type section struct {
	addr  uint64
	data  []byte
	order binary.ByteOrder
}

// ReadAt reads at address off, for the decoders that show PC-relative
// loads of constants.
func (s section) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off) < s.addr || uint64(off)-s.addr >= uint64(len(s.data)) {
		return 0, io.EOF
	}
	n := copy(p, s.data[uint64(off)-s.addr:])
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

// textOf returns the section of obj whose file contents hold address pc.
func textOf(obj object.Object, pc uint64) (section, error) {
	m, err := object.NewMapping(obj)
	if err != nil {
		return section{}, err
	}
	i, err := m.Section(pc)
	if err != nil {
		return section{}, err
	}
	secs, err := obj.Sections()
	if err != nil {
		return section{}, err
	}
	data, err := obj.SectionData(i)
	if err != nil {
		return section{}, err
	}
	return section{addr: secs[i].Addr, data: data, order: obj.Endian()}, nil
}

// disassemble writes fn's instructions, read from text, to w.
// words says whether to show encodings as 32-bit words, as objdump does for
// architectures other than x86.
func disassemble(w io.Writer, tab *gosym.Table, fn gosym.Function, dec decoder, words bool, text section) error {
	lookup := func(addr uint64) (string, uint64) {
		f, err := tab.ResolveFunction(addr)
		if err != nil {
			return "", 0
		}
		return f.Name(), f.Entry()
	}
	fmt.Fprintf(w, "TEXT %s(SB) %s\n", fn.Name(), fn.File())

	// The instruction rows are laid out as go tool objdump lays them out,
	// "  file:line\taddr\tencoding\tinstruction\t" through a tabwriter,
	// all in one block so that the columns line up across the comment
	// lines, which are inserted afterwards: comments[i] goes before row i.
	var (
		rows     strings.Builder
		comments = map[int]string{}
		nrows    int
		locs     []gosym.Location
		stack    strings.Builder
		last     string
	)
	tw := tabwriter.NewWriter(&rows, 18, 8, 1, '\t', 0)
	// The alignment padding after the code is summarized, not decoded:
	// objdump, knowing symbol sizes, does not show it either.
	codeEnd := fn.CodeEnd()
	end := codeEnd
	if avail := text.addr + uint64(len(text.data)); end > avail {
		end = avail
	}
	for pc := fn.Entry(); pc < end; nrows++ {
		code := text.data[pc-text.addr : end-text.addr]
		asm, size := dec(code, pc, lookup, text)
		size = min(size, len(code))
		var err error
		locs, err = fn.ResolveLocations(pc, locs)
		if err != nil {
			return err
		}

		// The inline stack, outermost first, each frame but the
		// innermost with the position of the call in it.
		stack.Reset()
		for i := len(locs) - 1; i >= 0; i-- {
			stack.WriteString(locs[i].Function)
			if i > 0 {
				fmt.Fprintf(&stack, " %s > ", fileLine(baseName(locs[i].File), locs[i].Line))
			}
		}
		if s := stack.String(); s != last {
			if pc != fn.Entry() || len(locs) > 1 {
				comments[nrows] = "  ; " + s + "\n"
			}
			last = s
		}

		in := locs[0]
		fmt.Fprintf(tw, "  %s\t%#x\t", fileLine(baseName(in.File), in.Line), pc)
		enc := code[:size]
		if size%4 != 0 || !words {
			fmt.Fprintf(tw, "%x", enc)
		} else {
			// As objdump: 32-bit words in the target's byte order.
			for j := 0; j+4 <= size; j += 4 {
				if j > 0 {
					fmt.Fprintf(tw, " ")
				}
				fmt.Fprintf(tw, "%08x", text.order.Uint32(enc[j:]))
			}
		}
		fmt.Fprintf(tw, "\t%s\t\n", asm)
		pc += uint64(size)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	out := rows.String()
	for i := 0; out != ""; i++ {
		if c, ok := comments[i]; ok {
			io.WriteString(w, c)
		}
		n := strings.IndexByte(out, '\n') + 1
		if _, err := io.WriteString(w, out[:n]); err != nil {
			return err
		}
		out = out[n:]
	}
	if end < codeEnd {
		return fmt.Errorf("%s: code truncated at %#x", fn.Name(), end)
	}
	if codeEnd < fn.End() {
		_, err := fmt.Fprintf(w, "  ; padding %#x-%#x (%d bytes)\n", codeEnd, fn.End(), fn.End()-codeEnd)
		return err
	}
	return nil
}
