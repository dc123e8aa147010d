package gosym

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestFindfunctab checks that lookups through the findfunctab agree with a
// binary search over the functab at every function's edges and at random
// PCs, and that a damaged findfunctab changes no answer.
func TestFindfunctab(t *testing.T) {
	tab := selfTable(t)
	if tab.funcIndex.buckets == nil {
		t.Skip("no findfunctab")
	}
	var pcs []uint64
	r := rand.New(rand.NewPCG(7, 8))
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		pcs = append(pcs, f.Entry()-1, f.Entry(), f.End()-1)
		if f.End() > f.Entry() {
			pcs = append(pcs, f.Entry()+r.Uint64N(f.End()-f.Entry()))
		}
	}
	search := func(pc uint64) (uint64, bool) {
		n := tab.hdr.nfunc
		if pc < tab.text || pc-tab.text >= 1<<32 {
			return 0, false
		}
		off := uint32(pc - tab.text)
		if off < tab.entryOff(0) || off >= tab.entryOff(n) {
			return 0, false
		}
		return tab.findFuncOffset(off), true
	}
	check := func(what string) {
		t.Helper()
		hits := 0
		for _, pc := range pcs {
			i, ok := tab.findFunc(pc)
			j, ok2 := search(pc)
			if i != j || ok != ok2 {
				t.Fatalf("%s: pc %#x: findFunc %d %v, binary search %d %v", what, pc, i, ok, j, ok2)
			}
			if _, _, _, fast := tab.funcIndex.find(tab.hdr.functab, pc); fast {
				hits++
			}
		}
		t.Logf("%s: %d of %d PCs found through the findfunctab", what, hits, len(pcs))
	}
	check("intact")

	orig := tab.funcIndex.buckets
	defer func() { tab.funcIndex.buckets = orig }()
	for _, damage := range []func(b []byte){
		func(b []byte) { copy(b, bytes.Repeat([]byte{0xff}, len(b))) },
		func(b []byte) { clear(b) },
		func(b []byte) {
			for i := range b {
				b[i] = byte(r.Uint32())
			}
		},
		func(b []byte) {
			for i := 0; i+4 <= len(b); i += funcBucketRecSize {
				b[i] += 3 // every base index off by 3
			}
		},
	} {
		b := bytes.Clone(orig)
		damage(b)
		tab.funcIndex.buckets = b
		check("damaged")
	}
}
