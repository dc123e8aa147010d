package gosym

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// cachePCs returns PCs of f that exercise its line cache: the entry, the
// last PC, the first and last PC of every range Lines reports, and a few
// random ones.
func cachePCs(f Function, lr []FunctionLine, r *rand.Rand, pcs []uint64) []uint64 {
	pcs = append(pcs[:0], f.Entry(), f.End()-1)
	for _, l := range lr {
		pcs = append(pcs, l.PCLo, l.PCHi-1)
	}
	for range 4 {
		pcs = append(pcs, f.Entry()+r.Uint64N(f.End()-f.Entry()))
	}
	return pcs
}

// compareCache checks that cached, whose line cache is on, resolves every
// function's PCs as direct, whose cache is off, does.
func compareCache(t *testing.T, cached, direct *Table) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	var lr []FunctionLine
	var pcs []uint64
	var a, b []Location
	checked := 0
	for f, err := range direct.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if f.End() <= f.Entry() {
			continue
		}
		if lr, err = f.Lines(lr); err != nil {
			continue
		}
		for _, pc := range cachePCs(f, lr, r, pcs) {
			var errA, errB error
			a, errA = cached.ResolveLocations(pc, a)
			b, errB = direct.ResolveLocations(pc, b)
			if fmt.Sprint(errA) != fmt.Sprint(errB) || !slices.Equal(a, b) {
				t.Fatalf("pc %#x: cached %v %v, direct %v %v", pc, a, errA, b, errB)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no PCs checked")
	}
	if cached.lines.used.Load() == 0 {
		t.Fatal("nothing was cached")
	}
}

// TestLineCacheSelf compares cached and uncached lookups over the test
// binary, with ranges stored narrow where they fit, and all wide.
func TestLineCacheSelf(t *testing.T) {
	for _, wide := range []bool{false, true} {
		cached := selfTable(t)
		cached.lines.wide = wide
		direct := selfTable(t)
		direct.SetLineCacheLimit(0)
		compareCache(t, cached, direct)
	}
}

// TestLineCacheCorpus compares cached and uncached lookups over every
// corpus binary, one per release and layout.
func TestLineCacheCorpus(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("no corpus binaries")
	}
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			obj, err := object.NewBytes(bin)
			if err != nil {
				t.Fatal(err)
			}
			cached, err := NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			direct, err := NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			direct.SetLineCacheLimit(0)
			compareCache(t, cached, direct)
			wide, err := NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			wide.lines.wide = true
			compareCache(t, wide, direct)
		})
	}
}

// TestLineCacheLimit checks that the cache stays within its limit and that
// lookups past it still allocate nothing.
func TestLineCacheLimit(t *testing.T) {
	tab := selfTable(t)
	const limit = 64 << 10
	tab.SetLineCacheLimit(limit)
	pcs := samplePCs(t, tab, 2000)
	locs := make([]Location, 0, 64)
	run := func() {
		for _, pc := range pcs {
			var err error
			if locs, err = tab.ResolveLocations(pc, locs); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	if used := tab.lines.used.Load(); used == 0 || used > limit {
		t.Errorf("cache holds %d bytes, limit %d", used, limit)
	}
	if n := testing.AllocsPerRun(5, run); n != 0 {
		t.Errorf("lookups past the cache limit allocate %v times per run", n)
	}
}

// FuzzLineCache damages tables as FuzzTable does and checks that cached
// and uncached lookups agree, errors included.
func FuzzLineCache(f *testing.F) {
	loadFuzzBases(f)
	for i := range fuzzBases.objs {
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(0), []byte{}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(1234), []byte{0x80, 0x80, 0x80}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(54321), []byte{0x7f, 0x13, 0x00}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(2), uint32(4321), []byte{0xff, 0xff, 0x00, 0x01}, uint32(0))
	}
	f.Fuzz(func(t *testing.T, which, target uint8, off uint32, patch []byte, trunc uint32) {
		obj, pcs := fuzzInput(which, target, off, patch, trunc)
		if obj == nil {
			return
		}
		cached, err := NewTable(obj)
		if err != nil {
			return
		}
		direct, _ := NewTable(obj)
		direct.SetLineCacheLimit(0)
		var a, b []Location
		for _, pc := range pcs {
			for _, p := range []uint64{pc, pc + 1, pc - 1} {
				var errA, errB error
				a, errA = cached.ResolveLocations(p, a)
				b, errB = direct.ResolveLocations(p, b)
				if fmt.Sprint(errA) != fmt.Sprint(errB) || !slices.Equal(a, b) {
					t.Fatalf("pc %#x: cached %v %v, direct %v %v", p, a, errA, b, errB)
				}
			}
		}
	})
}

// TestManyFiles gives a function a pcfile table that changes file at every
// byte, through more files than the cache takes: the function is not
// cached, and its lookups still agree with the tables.
func TestManyFiles(t *testing.T) {
	loadFuzzBases(t)
	base := fuzzBases.objs[len(fuzzBases.objs)-1]
	tab, err := NewTable(base)
	if err != nil {
		t.Fatal(err)
	}
	const nfiles = maxCachedFiles + 10
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if f.End()-f.Entry() < 2*nfiles*uint64(tab.hdr.quantum) {
			continue
		}
		// File numbers 0, 1, 2, ... one quantum each, then the last
		// to the end.
		var pcfile []byte
		for range nfiles {
			pcfile = binary.AppendUvarint(pcfile, 2) // zig-zag +1
			pcfile = binary.AppendUvarint(pcfile, 1)
		}
		pcfile = binary.AppendUvarint(pcfile, 2)
		pcfile = binary.AppendUvarint(pcfile, (f.End()-f.Entry())/uint64(tab.hdr.quantum)-nfiles)
		pcfile = append(pcfile, 0)
		// The table goes at the end of the pc-value tables (whose last
		// functions it damages), and f's pcfile field points to it.
		off := uint32(len(tab.hdr.pctab) - len(pcfile))
		m := &memObject{order: base.order, hdrs: base.hdrs}
		for _, d := range base.data {
			orig := d
			d = slices.Clone(d)
			if at, ok := offsetIn(orig, tab.hdr.pctab); ok {
				copy(d[at+uint64(off):], pcfile)
			}
			if at, ok := offsetIn(orig, f.rec()); ok {
				binary.LittleEndian.PutUint32(d[at+uint64(tab.layout.pcfile):], off)
			}
			m.data = append(m.data, d)
		}
		cached, err := NewTable(m)
		if err != nil {
			t.Fatal(err)
		}
		direct, _ := NewTable(m)
		direct.SetLineCacheLimit(0)
		cf, err := cached.ResolveFunction(f.Entry())
		if err != nil {
			t.Fatal(err)
		}
		if cf.decodeLines() != nil {
			t.Fatalf("%s with %d files was cached", f.Name(), nfiles+1)
		}
		var a, b []Location
		for range 2 { // the cache would take the function on its second lookup
			for pc := f.Entry(); pc < f.End(); pc++ {
				var errA, errB error
				a, errA = cached.ResolveLocations(pc, a)
				b, errB = direct.ResolveLocations(pc, b)
				if fmt.Sprint(errA) != fmt.Sprint(errB) || !slices.Equal(a, b) {
					t.Fatalf("pc %#x: cached %v %v, direct %v %v", pc, a, errA, b, errB)
				}
			}
		}
		return
	}
	t.Fatal("no function large enough")
}
