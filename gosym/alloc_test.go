package gosym

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// samplePCs returns n PCs spread over the table's functions, from a fixed seed.
func samplePCs(t testing.TB, tab *Table, n int) []uint64 {
	t.Helper()
	var fns []Function
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if f.End() > f.Entry() {
			fns = append(fns, f)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	pcs := make([]uint64, n)
	for i := range pcs {
		f := fns[r.IntN(len(fns))]
		pcs[i] = f.Entry() + r.Uint64N(f.End()-f.Entry())
	}
	return pcs
}

func TestLookupsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	tab := selfTable(t)
	checkNoAllocs(t, tab, samplePCs(t, tab, 512))
}

// checkNoAllocs checks that the lookups at pcs (function, locations,
// inlined functions, line table) allocate nothing once warm.
func checkNoAllocs(t *testing.T, tab *Table, pcs []uint64) {
	t.Helper()
	locs := make([]Location, 0, 64)
	inl := make([]InlineFunction, 0, 1024)
	var lr []FunctionLine
	run := func() {
		for _, pc := range pcs {
			f, err := tab.ResolveFunction(pc)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Name()
			_ = f.File()
			if locs, err = tab.ResolveLocations(pc, locs); err != nil {
				t.Fatal(err)
			}
			if inl, err = f.InlineFunctions(inl); err != nil {
				t.Fatal(err)
			}
			if lr, err = f.Lines(lr); err != nil {
				t.Fatal(err)
			}
		}
	}
	run() // warm up: grows lr to the largest function, copies the string tables
	if n := testing.AllocsPerRun(10, run); n != 0 {
		t.Errorf("lookups allocate %v times per run of %d PCs", n, len(pcs))
	}
}

// TestConcurrentUse resolves from several goroutines on one Table (run
// with -race), looking up by name and by line (whose indexes the first
// lookups build), and uses the strings after Close.
func TestConcurrentUse(t *testing.T) {
	tab := selfTable(t)
	pcs := samplePCs(t, tab, 2000)
	want := make([][]Location, len(pcs))
	for i, pc := range pcs {
		want[i], _ = tab.ResolveLocations(pc, nil)
	}
	var wg sync.WaitGroup
	results := make([][]Location, len(pcs))
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var locs []Location
			for i := g; i < len(pcs); i += 8 {
				locs, _ = tab.ResolveLocations(pcs[i], locs[:0])
				results[i] = append([]Location(nil), locs...)
				if _, err := tab.LookupFunction(locs[len(locs)-1].Function); err != nil {
					t.Error(err)
				}
				for _, err := range tab.LookupFunctions(locs[len(locs)-1].Function) {
					if err != nil {
						t.Error(err)
					}
				}
				if l := locs[0]; l.File != "" && l.Line > 0 {
					if lines, err := tab.LinePCs(l.File, l.Line, nil); err != nil || len(lines) == 0 {
						t.Errorf("LinePCs(%s, %d) = %v, %v", l.File, l.Line, lines, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range pcs {
		if !slices.Equal(results[i], want[i]) {
			t.Fatalf("pc %#x: concurrent %v, serial %v", pcs[i], results[i], want[i])
		}
	}
	if _, err := tab.ResolveLocations(pcs[0], nil); err != ErrClosed {
		t.Errorf("ResolveLocations after Close: %v, want ErrClosed", err)
	}
	// Strings returned before Close are still readable.
	n := 0
	for _, r := range results {
		for _, l := range r {
			n += len(l.Function) + len(l.File)
		}
	}
	if n == 0 {
		t.Fatal("no strings")
	}
}
