package lidia

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// walkLengths returns, for the file r, how many PCs make Pyroscope's
// backward walk read n ranges (walks[n]), computed from the layout: an
// address whose last range at or before it is range j reads the ranges
// from j back to the depth-0 range before it.
func walkLengths(r *Reader) (walks []int) {
	d0 := 0
	for j := range r.n {
		if r.field(r.rec(j), fDepth) == 0 {
			d0 = j
		}
		va := r.vaAt(j)
		if j+1 < r.n && r.vaAt(j+1) == va {
			continue // not the last range at its VA
		}
		end := r.vaAt(d0) + r.field(r.rec(d0), fLength) // the end of the group, at most
		if j+1 < r.n {
			end = min(end, r.vaAt(j+1))
		}
		n := j - d0 + 1
		for len(walks) <= n {
			walks = append(walks, 0)
		}
		walks[n] += int(end - va)
	}
	return walks
}

// TestBoundedWalks checks that on files written for the corpus, and for the
// go and compile binaries of the installed toolchain, Pyroscope's walk
// reads at most maxWalk ranges at any address: from the layout, and with
// the Pyroscope-design reader at every PC of the function with the most
// ranges (compile's simdIntrinsics), whose frames must still be
// ResolveLocations' there.
func TestBoundedWalks(t *testing.T) {
	tabs := map[string]*gosym.Table{}
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		tabs[e.Name] = entryTable(t, e)
	}
	for _, name := range []string{"go", "compile"} {
		if raceEnabled {
			break // the corpus suffices to check the code; these take long under -race
		}
		if path := toolBinaryOrEmpty(name); path != "" {
			tabs[name] = openTable(t, path)
		}
	}
	for name, tab := range tabs {
		data := writeBytes(t, tab)
		r := newReader(t, data)
		walks := walkLengths(r)
		if len(walks)-1 > maxWalk {
			t.Errorf("%s: Pyroscope's walk reads up to %d ranges", name, len(walks)-1)
		}
		if name != "go" && name != "compile" {
			continue
		}
		t.Logf("%s: Pyroscope's walk: %s", name, walkSummary(walks))
		// The function with the most ranges, at every PC.
		var most gosym.Function
		mostN := 0
		for _, f := range functions(t, tab) {
			lo, hi := r.search(f.Entry()), r.search(f.End()-1)
			if hi-lo > mostN {
				most, mostN = f, hi-lo
			}
		}
		p, err := openPyro(bytes.NewReader(data), true)
		if err != nil {
			t.Fatal(err)
		}
		var locs []gosym.Location
		var pf []pyroFrame
		longest := 0
		for pc := most.Entry(); pc < most.End(); pc++ {
			locs, _ = most.ResolveLocations(pc, locs)
			pf = p.Lookup(pf, pc)
			if !samePyro(pf, locs) {
				t.Fatalf("%s pc %#x: Pyroscope's reader %v, want %v", name, pc, pf, locs)
			}
			longest = max(longest, p.walked)
		}
		if longest > maxWalk {
			t.Errorf("%s: %s: Pyroscope's walk reads up to %d ranges", name, most.Name(), longest)
		}
		t.Logf("%s: %s, %d ranges: Pyroscope's walk reads at most %d", name, most.Name(), mostN+1, longest)
	}
}

// TestLongWalk checks that Lookup's walk, on a file whose ranges do not
// nest, reads at most maxWalk ranges: a depth-0 range followed by more
// inlined ranges than files written here ever have before the next one (a
// damaged file, as the reproducer r08 of issue 21, where every Lookup read
// all the ranges) gives ErrCorrupted, and one with as many as they may
// have, all its frames.
func TestLongWalk(t *testing.T) {
	for _, inlined := range []int{maxWalk - 1, maxWalk, 10 * maxWalk} {
		r := newReader(t, longWalk(inlined))
		if r.nodes != nil {
			t.Fatal("read as nested")
		}
		last := uint64(0x1001 + inlined)
		got, err := r.Lookup(last, nil)
		if inlined < maxWalk {
			if err != nil || len(got) != inlined+1 {
				t.Errorf("%d inlined ranges: %d frames, %v; want %d frames", inlined, len(got), err, inlined+1)
			}
			continue
		}
		if !errors.Is(err, ErrCorrupted) {
			t.Errorf("%d inlined ranges: %d frames, %v; want ErrCorrupted", inlined, len(got), err)
		}
		// A damaged file can fail every lookup: the error costs nothing.
		dst := make([]gosym.Location, 0, maxWalk)
		if n := testing.AllocsPerRun(100, func() { r.Lookup(last, dst) }); n != 0 {
			t.Errorf("%d inlined ranges: a failed Lookup allocates %v times", inlined, n)
		}
		// Before the inlined ranges, the walk is short.
		if got, err := r.Lookup(0x1000, nil); err != nil || len(got) != 1 {
			t.Errorf("%d inlined ranges, at the entry: %v, %v", inlined, got, err)
		}
	}
}

// longWalk returns a file of one depth-0 range at 0x1000 and inlined
// ranges of depth 1 from 0x1001 on, one a byte, all to its end:
// overlapping ranges of one depth, so that the file does not nest and is
// read with the walk, which reads them all from the last.
func longWalk(inlined int) []byte {
	ranges := []pyroRange{{VA: 0x1000, Length: 0x1000, Function: "f", File: "f.go"}}
	for i := range inlined {
		ranges = append(ranges, pyroRange{VA: 0x1001 + uint64(i), Length: 0x1000 - 1 - uint32(i), Depth: 1, Function: "g", File: "g.go"})
	}
	return writePyro(ranges, true, true)
}
