package gosym

import (
	"math/rand/v2"
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
