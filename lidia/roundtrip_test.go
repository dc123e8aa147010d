package lidia

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// roundTrip checks, at every PC of every function of tab, the file data
// written for it: Lookup must return ResolveLocations' frames (functions,
// files, lines), and the re-implementation of Pyroscope's reader (its
// backward walk, pyroscope_test.go) the same functions and files, with line
// 0, except at alignment padding, which has no file and where Pyroscope's
// reader reports the function's. Addresses outside the functions give no
// frame, or that of a C function. It also checks the layout (checkLayout) and returns the number of
// PCs and frames checked.
func roundTrip(t *testing.T, tab *gosym.Table, data []byte) (pcs, frames int) {
	t.Helper()
	r := newReader(t, data)
	p, err := openPyro(bytes.NewReader(data), true)
	if err != nil {
		t.Fatalf("Pyroscope's reader rejects the file: %v", err)
	}
	checkLayout(t, tab, data)
	var locs []gosym.Location
	var got []gosym.Location
	var pf []pyroFrame
	bad, badPyro := 0, 0
	var walks [maxWalk + 2]int // walks[n]: PCs where Pyroscope's walk reads n ranges (the last: more)
	fns := functions(t, tab)
	for _, f := range fns {
		for pc := f.Entry(); pc < f.End(); pc++ {
			if locs, err = f.ResolveLocations(pc, locs); err != nil {
				t.Fatalf("%s pc %#x: %v", f.Name(), pc, err)
			}
			if got, err = r.Lookup(pc, got); err != nil {
				t.Fatalf("pc %#x: Lookup: %v", pc, err)
			}
			pcs++
			frames += len(locs)
			if !sameFrames(got, locs) {
				if bad++; bad <= 10 {
					t.Errorf("pc %#x:\n got  %v\n want %v", pc, got, locs)
				}
			}
			if raceEnabled && pc%16 != 0 {
				continue // under -race, Pyroscope's reader at one PC in 16
			}
			pf = p.Lookup(pf, pc)
			walks[min(p.walked, maxWalk+1)]++
			if !samePyro(pf, locs) {
				if badPyro++; badPyro <= 10 {
					t.Errorf("pc %#x: Pyroscope's reader:\n got  %v\n want %v", pc, pf, locs)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d PCs disagree", bad, pcs)
	}
	if badPyro > 0 {
		t.Errorf("Pyroscope's reader: %d of %d PCs disagree", badPyro, pcs)
	}
	if n := walks[maxWalk+1]; n > 0 {
		t.Errorf("Pyroscope's walk reads more than %d ranges at %d PCs", maxWalk, n)
	}
	t.Logf("Pyroscope's walk: %s", walkSummary(walks[:]))
	for _, pc := range []uint64{0, fns[0].Entry() - 1, fns[len(fns)-1].End(), ^uint64(0)} {
		// Nothing, or a C function (TestCFunctions checks those).
		got, err = lookup(r, pc, got)
		if err != nil || len(got) > 1 || len(got) == 1 && (pc == 0 || pc == ^uint64(0) || got[0].File != "" || got[0].Line != 0) {
			t.Errorf("Lookup(%#x) outside the functions = %v, %v", pc, got, err)
		}
	}
	return pcs, frames
}

func sameFrames(got []gosym.Location, want []gosym.Location) bool {
	if len(got) != len(want) {
		return false
	}
	for i, l := range want {
		if got[i] != (gosym.Location{Function: l.Function, File: l.File, Line: l.Line}) {
			return false
		}
	}
	return true
}

// samePyro reports whether the frames of Pyroscope's reader have the
// functions and files of want (any file at padding), and line 0.
func samePyro(got []pyroFrame, want []gosym.Location) bool {
	if len(got) != len(want) {
		return false
	}
	for i, l := range want {
		if got[i].FunctionName != l.Function || got[i].LineNumber != 0 || (got[i].FilePath != l.File && !padding(want)) {
			return false
		}
	}
	return true
}

// walkSummary describes a distribution of walk lengths: percentiles and
// the maximum, over PCs.
func walkSummary(walks []int) string {
	total := 0
	for _, n := range walks {
		total += n
	}
	var out []string
	seen, maxLen := 0, 0
	next := []float64{0.5, 0.9, 0.99, 0.999}
	for l, n := range walks {
		seen += n
		for len(next) > 0 && float64(seen) >= next[0]*float64(total) {
			out = append(out, fmt.Sprintf("p%g %d", next[0]*100, l))
			next = next[1:]
		}
		if n > 0 {
			maxLen = l
		}
	}
	return fmt.Sprintf("%s, max %d ranges read", strings.Join(out, ", "), maxLen)
}

// checkLayout checks the depth-0 ranges of a file written for tab: they
// tile each function's [Entry, End) exactly, padding included, with its
// name; consecutive ranges of one function have different files, unless
// the second is split off to bound Pyroscope's walk (where the ranges
// from the first up to the second, plus those opened with it, are more
// than maxWalk); ranges outside the functions (symbols of C functions)
// have a name, no file and no lines.
func checkLayout(t *testing.T, tab *gosym.Table, data []byte) {
	t.Helper()
	var depth0 []pyroRange
	var group []int // group[i]: the number of ranges from depth0[i] to the next
	var atVA []int  // atVA[i]: the number of ranges at depth0[i]'s VA
	for _, p := range decodeRanges(t, newReader(t, data)) {
		if p.Depth == 0 {
			depth0 = append(depth0, p)
			group = append(group, 0)
			atVA = append(atVA, 0)
		}
		group[len(group)-1]++
		if p.VA == depth0[len(depth0)-1].VA {
			atVA[len(atVA)-1]++
		}
	}
	fns := functions(t, tab)
	i, split, walkSplit, syms := 0, 0, 0, 0
	symbol := func(p pyroRange) {
		syms++
		if p.Function == "" || p.File != "" || len(p.Lines) > 0 {
			t.Errorf("range %+v outside the functions", p)
		}
	}
	for _, f := range fns {
		for ; i < len(depth0) && depth0[i].VA < f.Entry(); i++ {
			symbol(depth0[i])
		}
		pc := f.Entry()
		for ; i < len(depth0) && depth0[i].VA < f.End(); i++ {
			p := depth0[i]
			if p.VA != pc || p.Function != f.Name() || p.VA+uint64(p.Length) > f.End() {
				t.Fatalf("%s [%#x, %#x): depth-0 range %s [%#x, +%#x) at %#x", f.Name(), f.Entry(), f.End(), p.Function, p.VA, p.Length, pc)
			}
			if pc != f.Entry() {
				split++
				if q := depth0[i-1]; q.File == p.File {
					if group[i-1]+atVA[i]-1 <= maxWalk {
						t.Errorf("%s: ranges at %#x and %#x split, both in %q, %d+%d ranges", f.Name(), q.VA, p.VA, p.File, group[i-1], atVA[i]-1)
					}
					walkSplit++
				}
			}
			pc += uint64(p.Length)
		}
		if pc != f.End() {
			t.Fatalf("%s [%#x, %#x): depth-0 ranges end at %#x", f.Name(), f.Entry(), f.End(), pc)
		}
	}
	for ; i < len(depth0); i++ {
		symbol(depth0[i])
	}
	t.Logf("%d functions, %d depth-0 ranges (%d split off: %d where the file changes, %d to bound walks; %d symbols outside)", len(fns), len(depth0), split, split-walkSplit, walkSplit, syms)
}

func TestRoundTripSelf(t *testing.T) {
	tab := selfTable(t)
	data := writeBytes(t, tab)
	pcs, frames := roundTrip(t, tab, data)
	t.Logf("test binary: %d PCs, %d frames agree (file of %d bytes)", pcs, frames, len(data))
}

// TestRoundTripToolchain checks the go and compile binaries of the
// installed toolchain at every PC: 6.9 and 11.8 million with go1.26.8, the
// largest binaries the tests have (under -race, only TestRoundTripSelf and
// the corpus run, which take long enough there).
func TestRoundTripToolchain(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if raceEnabled {
		t.Skip("18 million PCs take minutes under -race")
	}
	for _, name := range []string{"go", "compile"} {
		t.Run(name, func(t *testing.T) {
			tab := openTable(t, toolBinary(t, name))
			pcs, frames := roundTrip(t, tab, writeBytes(t, tab))
			t.Logf("%s: %d PCs, %d frames agree", name, pcs, frames)
		})
	}
}

func TestRoundTripCorpus(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			tab := entryTable(t, e)
			data := writeBytes(t, tab)
			pcs, frames := roundTrip(t, tab, data)
			t.Logf("%s: %d PCs, %d frames agree (file of %d bytes)", e.Name, pcs, frames, len(data))
		})
	}
}
