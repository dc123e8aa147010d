package gosym

import (
	"bytes"
	"encoding/binary"
	"errors"
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

// TestEndBeforeEntry moves a function's successor in the functab before
// it (r10): Functions must report the damage instead of yielding a
// Function whose End is below its Entry, and so must a lookup of a PC in
// it.
func TestEndBeforeEntry(t *testing.T) {
	m, tab, sec := newestBase(t)
	if tab.layout.entryIsPtr {
		t.Skip("the newest base has pointer entries")
	}
	const k = 100
	f, _, err := tab.funcAt(k)
	if err != nil {
		t.Fatal(err)
	}
	d := m.data[sec]
	e := sectionOffset(t, d, tab.hdr.functab) + (k+1)*8
	binary.LittleEndian.PutUint32(d[e:], 0) // the entry offset of function k+1
	bad, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for g, err := range bad.Functions() {
		if err != nil {
			last = err
			break
		}
		if g.End() < g.Entry() {
			t.Fatalf("Functions yields %s with End %#x < Entry %#x", g.Name(), g.End(), g.Entry())
		}
	}
	if !errors.Is(last, ErrCorrupted) {
		t.Errorf("Functions ends with %v, want ErrCorrupted", last)
	}
	if _, err := bad.ResolveFunction(f.Entry()); !errors.Is(err, ErrCorrupted) {
		t.Errorf("ResolveFunction in the damaged function: %v, want ErrCorrupted", err)
	}
}
