package gosym

import (
	"slices"
	"testing"
)

// TestLinesAgreeWithResolve checks that Lines partitions every function
// into ranges whose innermost frame is what ResolveLocations reports at
// each PC, and that the ParentPC of its innermost inlined call resolves to
// the outer frames.
func TestLinesAgreeWithResolve(t *testing.T) {
	tab := selfTable(t)
	var lr []FunctionLine
	var locs, outer []Location
	var calls []InlinedCall
	inlined := 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		lr, err = f.Lines(lr)
		if err != nil {
			t.Fatalf("%s: Lines: %v", f.Name(), err)
		}
		fl := lr
		if calls, err = f.InlinedCalls(calls); err != nil {
			t.Fatalf("%s: InlinedCalls: %v", f.Name(), err)
		}
		if f.Entry() == f.End() {
			// An empty function: another symbol at the same address
			// (the C++ of the race runtime folds identical code).
			if len(fl) != 0 {
				t.Fatalf("%s: empty, yet Lines gives %v", f.Name(), fl)
			}
			continue
		}
		if len(fl) == 0 || fl[0].PCLo != f.Entry() || fl[len(fl)-1].PCHi != f.End() {
			t.Fatalf("%s: Lines do not cover [%#x, %#x): %v", f.Name(), f.Entry(), f.End(), fl)
		}
		for i, r := range fl {
			if r.PCLo >= r.PCHi || (i > 0 && fl[i-1].PCHi != r.PCLo) {
				t.Fatalf("%s: range %d [%#x, %#x) is empty or not contiguous", f.Name(), i, r.PCLo, r.PCHi)
			}
			for pc := r.PCLo; pc < r.PCHi; pc++ {
				locs, err = f.ResolveLocations(pc, locs)
				if err != nil {
					t.Fatal(err)
				}
				in := locs[0]
				if in.Function != r.Function || in.File != r.File || in.Line != r.Line {
					t.Fatalf("%s pc %#x: Lines says %s %s:%d, ResolveLocations %s %s:%d",
						f.Name(), pc, r.Function, r.File, r.Line, in.Function, in.File, in.Line)
				}
				if (r.Call >= 0) != (len(locs) > 1) {
					t.Fatalf("%s pc %#x: Call %d with %d frames", f.Name(), pc, r.Call, len(locs))
				}
				if r.Call < 0 {
					continue
				}
				parentPC := calls[r.Call].ParentPC
				if parentPC == 0 {
					continue // Go 1.9–1.11 records
				}
				inlined++
				outer, err = f.ResolveLocations(parentPC, outer)
				if err != nil || !slices.Equal(outer, locs[1:]) {
					t.Fatalf("%s pc %#x: frames at ParentPC %#x = %v, want %v", f.Name(), pc, parentPC, outer, locs[1:])
				}
			}
		}
	}
	if inlined == 0 {
		t.Fatal("no inlined PC seen")
	}
	t.Logf("%d inlined PCs", inlined)
}

// TestInlineFunctions checks InlineFunctions against the inline frames that
// ResolveLocations reports at every PC of each function.
func TestInlineFunctions(t *testing.T) {
	tab := selfTable(t)
	var locs []Location
	var inl []InlineFunction
	seen := map[string]map[string]bool{} // inlinee -> files seen at its frames
	total := 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		clear(seen)
		for pc := f.Entry(); pc < f.End(); pc++ {
			locs, _ = f.ResolveLocations(pc, locs)
			for _, l := range locs[:len(locs)-1] {
				if seen[l.Function] == nil {
					seen[l.Function] = map[string]bool{}
				}
				seen[l.Function][l.File] = true
			}
		}
		inl, err = f.InlineFunctions(inl)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		names := map[string]bool{}
		for _, in := range inl {
			if names[in.Name] {
				t.Errorf("%s: %s listed twice", f.Name(), in.Name)
			}
			names[in.Name] = true
			files, ok := seen[in.Name]
			if !ok {
				// An inlined call whose code was optimized away
				// entirely has no PC; there is nothing to compare.
				continue
			}
			if !files[in.File] {
				t.Errorf("%s: inlinee %s file %q, frames show %v", f.Name(), in.Name, in.File, files)
			}
		}
		for name := range seen {
			if !names[name] {
				t.Errorf("%s: inlinee %s seen at a PC but not listed", f.Name(), name)
			}
		}
		total += len(inl)
	}
	if total == 0 {
		t.Fatal("no inlined functions found")
	}
	t.Logf("%d inlined functions", total)
}
