package symbfile

import (
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/corpussample"
)

// TestX86LenAgrees checks the fast path against x86asm.Decode after
// every opcode it handles (with and without a REX prefix on amd64, and on
// 386, where 40-4F are instructions of their own): on random bytes, and
// on every ModRM byte with every SIB base, whole and truncated: wherever x86Len gives a length, x86asm must decode an
// instruction of that length, a CALL exactly where x86Len says so.
func TestX86LenAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	var heads [][]byte
	for op := range 256 {
		if x86Forms[op] == xNone {
			continue
		}
		if op == 0x0f {
			for op2 := range 256 {
				heads = append(heads, []byte{0x0f, byte(op2)})
			}
			continue
		}
		heads = append(heads, []byte{byte(op)})
	}
	handled := 0
	for _, mode := range []int{64, 32} {
		prefixes := [][]byte{nil}
		if mode == 64 {
			for rex := 0x40; rex <= 0x4f; rex++ {
				prefixes = append(prefixes, []byte{byte(rex)})
			}
		}
		for _, pre := range prefixes {
			for _, h := range heads {
				// Random bytes, then every ModRM byte with every SIB base
				// (every pcStride-th under -race).
				for k := 0; k < 300+256*8; k++ {
					if k >= 300 && (k-300)%pcStride != 0 {
						continue
					}
					code := append(slices.Concat(pre, h), make([]byte, 16)...)
					at := len(pre) + len(h)
					for i := at; i < len(code); i++ {
						code[i] = byte(rng.Uint32())
					}
					if m := k - 300; m >= 0 {
						code[at], code[at+1] = byte(m>>3), code[at+1]&^7|byte(m&7)
					}
					// Whole, and cut short at a random length.
					for _, c := range [][]byte{code, code[:rng.IntN(len(code))]} {
						n, call := x86Len(c, mode)
						if n == 0 {
							continue
						}
						handled++
						inst, err := x86asm.Decode(c, mode)
						if err != nil || inst.Op == 0 || inst.Len != n || (inst.Op == x86asm.CALL) != call {
							t.Fatalf("mode %d, % x: x86Len %d, call %v; x86asm %v (len %d), %v", mode, c, n, call, inst.Op, inst.Len, err)
						}
					}
				}
			}
		}
	}
	t.Logf("%d encodings agree", handled)
}

// TestX86Walk checks that the walk with the fast path finds the same
// calls as the walk with x86asm alone in every function of the go binary
// of the installed toolchain, the test binary, and the corpus's amd64 and
// 386 binaries.
func TestX86Walk(t *testing.T) {
	tabs := map[string]*gosym.Table{"test binary": selfTable(t), "go": openTable(t, toolBinary(t))}
	for _, e := range corpussample.Test(t) {
		if e.GOARCH == "amd64" || e.GOARCH == "386" {
			tabs[e.Name] = entryTable(t, e)
		}
	}
	for name, tab := range tabs {
		mode := 64
		if tab.Object().(interface{ Arch() string }).Arch() == "386" {
			mode = 32
		}
		var fast, slow []uint64
		calls := 0
		for f, err := range tab.Functions() {
			if err != nil {
				t.Fatal(err)
			}
			code, err := f.Code()
			if err != nil {
				t.Fatal(err)
			}
			fast = x86Calls(code, f.Entry(), mode, true, fast[:0])
			slow = x86Calls(code, f.Entry(), mode, false, slow[:0])
			if !slices.Equal(fast, slow) {
				t.Errorf("%s: %s: fast path %#x, x86asm %#x", name, f.Name(), fast, slow)
			}
			calls += len(slow)
		}
		t.Logf("%s: %d calls", name, calls)
	}
}
