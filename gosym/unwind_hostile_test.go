package gosym

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// noise is memory of random words, the same at each address, some of them
// PCs of the table's functions.
type noise struct {
	pcs  []uint64
	big  bool
	seed uint64
}

func (m *noise) ReadAt(p []byte, off int64) (int, error) {
	r := rand.New(rand.NewPCG(uint64(off), m.seed))
	v := r.Uint64()
	if r.IntN(2) == 0 {
		v = m.pcs[r.IntN(len(m.pcs))] + uint64(r.IntN(16))
	}
	for i := range p {
		if m.big {
			p[i] = byte(v >> (8 * (len(p) - 1 - i)))
		} else {
			p[i] = byte(v >> (8 * i))
		}
	}
	return len(p), nil
}

// TestUnwindHostile unwinds over random memory, half of whose words are
// PCs of functions, from random registers, in corpus binaries of both
// pointer sizes and byte orders and of link-register machines: every walk
// must end (with an error or at a top frame) without a panic, within
// maxFrames frames.
func TestUnwindHostile(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		if e.GOOS != "linux" || e.Variant != "default" && e.Variant != "nodwarf" {
			return
		}
		var pcs []uint64
		for f, err := range tab.Functions() {
			if err != nil {
				t.Fatal(err)
			}
			pcs = append(pcs, f.Entry())
		}
		r := rand.New(rand.NewPCG(1, 2))
		total := 0
		for i := range 200 {
			mem := &noise{pcs: pcs, big: e.ByteOrder == "big", seed: uint64(i)}
			regs := Regs{PC: pcs[r.IntN(len(pcs))] + uint64(r.IntN(64)), SP: r.Uint64() >> 16, LR: pcs[r.IntN(len(pcs))] + 4}
			n := 0
			for _, err := range tab.Unwind(regs, mem) {
				n++
				if err != nil {
					break
				}
			}
			if n > maxFrames+1 {
				t.Fatalf("walk %d: %d frames", i, n)
			}
			total += n
		}
		t.Logf("200 walks, %d frames", total)
	})
}

// TestUnwindSignalLoop: hostile signal frames whose ucontext leads back
// into runtime.sigtramp (at the same PC and SP, or alternating between
// two) end the walk with an error, at once or within maxFrames frames,
// and a ucontext that cannot be found or read is an error that names the
// signal frame.
func TestUnwindSignalLoop(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("a linux/amd64 signal frame of the test binary")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	tab, err := Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	tramp, err := tab.LookupFunction("runtime.sigtramp")
	if err != nil {
		t.Fatal(err)
	}
	ret, err := tab.LookupFunction("runtime.sigreturn__sigaction")
	if err != nil {
		t.Skip(err)
	}
	const base = 0x10000
	mem := &snapshot{base: base, data: make([]byte, 0x4000)}
	put := func(addr, v uint64) { binary.LittleEndian.PutUint64(mem.data[addr-base:], v) }
	// A frame at sp, entered at sigtramp's entry (SP delta 0): its
	// ucontext at sp+8, after the restorer's address; its interrupted
	// context is next.
	frame := func(sp, nextSP uint64) {
		put(sp, ret.Entry())
		put(sp+8, 0)     // uc_flags
		put(sp+8+24, 2)  // uc_stack.ss_flags: SS_DISABLE, no alternate stack
		put(sp+8+304, 3) // the siginfo's si_signo, after the ucontext
		put(sp+8+uint64(sigFrameLinuxAMD64.pc), tramp.Entry())
		put(sp+8+uint64(sigFrameLinuxAMD64.sp), nextSP)
	}
	a, b := uint64(base+0x1000), uint64(base+0x2000)
	for _, tc := range []struct {
		name  string
		setup func()
		want  string
	}{
		{"self", func() { frame(a, a) }, "stuck"},
		{"two", func() { frame(a, b); frame(b, a) }, "stuck"},
		{"no ucontext", func() { clear(mem.data) }, "crossing the signal frame of runtime.sigtramp: no ucontext"},
	} {
		clear(mem.data)
		tc.setup()
		n := 0
		var last error
		for _, err := range tab.Unwind(Regs{PC: tramp.Entry(), SP: a}, mem) {
			n++
			last = err
		}
		if last == nil || !strings.Contains(last.Error(), tc.want) || n > maxFrames+2 {
			t.Errorf("%s: %d frames, last error %v; want %q", tc.name, n, last, tc.want)
		}
		t.Logf("%s: %d frames: %v", tc.name, n, last)
	}
}
