package profiles_test

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
	"github.com/gosym-dev/gosym/profiles"
)

var allocSink [][]byte

// selfProfile returns a heap profile of the test binary, symbolized by
// runtime/pprof, and the binary's Table.
func selfProfile(t testing.TB) (*profile.Profile, *gosym.Table) {
	t.Helper()
	// Every allocation recorded for a while, published by a GC.
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	for i := range 100 {
		allocSink = append(allocSink, make([]byte, 16+i))
	}
	runtime.MemProfileRate = rate
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	tab, err := gosym.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return p, tab
}

func linesOf(p *profile.Profile) map[uint64][]frame {
	m := make(map[uint64][]frame)
	for _, l := range p.Location {
		m[l.ID] = frames(l.Line)
	}
	return m
}

// TestReturnAddresses turns the call addresses of a runtime/pprof profile
// back into return addresses (+1 in every location that is a caller) and
// checks that WithReturnAddresses gives the runtime's frames.
func TestReturnAddresses(t *testing.T) {
	orig, tab := selfProfile(t)
	want := linesOf(orig)
	p := stripProfile(orig)
	callers := make(map[*profile.Location]bool)
	leaves := make(map[*profile.Location]bool)
	for _, s := range p.Sample {
		for k, l := range s.Location {
			if k == 0 {
				leaves[l] = true
			} else {
				callers[l] = true
			}
		}
	}
	moved := 0
	for _, l := range p.Location {
		if callers[l] {
			l.Address++
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no caller location")
	}
	// Without the option, the return addresses give other lines (the
	// test means something).
	q := p.Copy()
	if _, err := profiles.Symbolize(q, []*gosym.Table{tab}); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, l := range q.Location {
		if got := frames(l.Line); !sameNames(got, want[l.ID]) {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("the return addresses of %d locations give the runtime's frames without WithReturnAddresses", moved)
	}
	if _, err := profiles.Symbolize(p, []*gosym.Table{tab}, profiles.WithReturnAddresses()); err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Location {
		if got := frames(l.Line); !slices.Equal(got, want[l.ID]) && !sameNames(got, want[l.ID]) {
			t.Errorf("location %d at %#x (leaf %v): %v, runtime %v", l.ID, l.Address, leaves[l], got, want[l.ID])
		}
	}
}

// sameNames reports whether a and b differ at most in files and start
// lines (runtime/pprof keys functions by name).
func sameNames(a, b []frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Function != b[i].Function || a[i].Line != b[i].Line {
			return false
		}
	}
	return true
}

// TestMappingMatch checks how mappings find their binary: by GNU or Go
// build ID, by being the main mapping without one, and not at all when
// the build ID is another binary's (an error wrapping ErrNoMatch).
func TestMappingMatch(t *testing.T) {
	orig, tab := selfProfile(t)
	gnu, goID, err := object.BuildIDs(tab.Object())
	if err != nil {
		t.Fatal(err)
	}
	if goID == "" {
		t.Fatal("the test binary has no Go build ID")
	}
	for _, c := range []struct {
		name, id string
		match    bool
	}{
		{"gnu", gnu, gnu != ""},
		{"go", goID, true},
		{"none", "", true},
		{"other", "0123456789abcdef", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "gnu" && gnu == "" {
				t.Skip("the test binary has no GNU build ID")
			}
			p := stripProfile(orig)
			p.Mapping[0].BuildID = c.id
			st, err := profiles.Symbolize(p, []*gosym.Table{tab})
			if c.match && err != nil || !c.match && !errors.Is(err, profiles.ErrNoMatch) {
				t.Fatal(err)
			}
			if c.match != (st.Symbolized > 0) || c.match != p.Mapping[0].HasInlineFrames {
				t.Errorf("%+v; HasInlineFrames %v; want a match: %v", st, p.Mapping[0].HasInlineFrames, c.match)
			}
			if !c.match && (len(st.UnmatchedMappings) == 0 || st.UnmatchedMappings[0] != p.Mapping[0].File) {
				t.Errorf("UnmatchedMappings %q", st.UnmatchedMappings)
			}
		})
	}
}

// TestWrappers builds samples by hand around a wrapper function of the
// test binary: a wrapper frame is hidden unless it called a panic
// function, a location that holds only a hidden wrapper leaves the
// samples, and WithWrappers keeps everything.
func TestWrappers(t *testing.T) {
	_, tab := selfProfile(t)
	var wrapper, panicFn, normal gosym.Function
	for fn, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case fn.Wrapper() && wrapper.Name() == "" && fn.End()-fn.Entry() > 16:
			wrapper = fn
		case fn.Name() == "runtime.gopanic":
			panicFn = fn
		case fn.Name() == "runtime.main":
			normal = fn
		}
	}
	if wrapper.Name() == "" || panicFn.Name() == "" || normal.Name() == "" {
		t.Fatalf("functions not found: wrapper %q, panic %q, normal %q", wrapper.Name(), panicFn.Name(), normal.Name())
	}
	// A PC in the wrapper's own code (not in a call it inlined).
	var wpc uint64
	var buf []gosym.Location
	for pc := wrapper.Entry(); pc < wrapper.End(); pc++ {
		buf, _ = tab.ResolveLocations(pc, buf)
		if len(buf) == 1 && buf[0].Wrapper {
			wpc = pc
			break
		}
	}
	if wpc == 0 {
		t.Fatalf("no PC of %s in its own code", wrapper.Name())
	}
	build := func() *profile.Profile {
		m := &profile.Mapping{ID: 1} // no addresses: link-time addresses
		loc := func(id, pc uint64) *profile.Location { return &profile.Location{ID: id, Mapping: m, Address: pc} }
		w1, w2, w3 := loc(1, wpc), loc(2, wpc+0), loc(3, wpc+0)
		pan, nor := loc(4, panicFn.Entry()+1), loc(5, normal.Entry()+1)
		return &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
			Mapping:    []*profile.Mapping{m},
			Location:   []*profile.Location{w1, w2, w3, pan, nor},
			Sample: []*profile.Sample{
				{Location: []*profile.Location{pan, w1, nor}, Value: []int64{1}}, // the wrapper called gopanic: shown
				{Location: []*profile.Location{nor, w2, nor}, Value: []int64{1}}, // hidden
				{Location: []*profile.Location{w3, nor}, Value: []int64{1}},      // innermost: hidden
			},
		}
	}
	p := build()
	st, err := profiles.Symbolize(p, []*gosym.Table{tab})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(s *profile.Sample) (out []uint64) {
		for _, l := range s.Location {
			out = append(out, l.ID)
		}
		return out
	}
	if st.Removed != 2 || len(p.Location) != 3 ||
		!slices.Equal(ids(p.Sample[0]), []uint64{4, 1, 5}) || !slices.Equal(ids(p.Sample[1]), []uint64{5, 5}) || !slices.Equal(ids(p.Sample[2]), []uint64{5}) {
		t.Errorf("%+v; samples %v %v %v", st, ids(p.Sample[0]), ids(p.Sample[1]), ids(p.Sample[2]))
	}
	if got := p.Location[0].Line; len(got) != 1 || got[0].Function.Name != wrapper.Name() {
		t.Errorf("the wrapper that called gopanic: %v", frames(got))
	}
	p = build()
	if st, err = profiles.Symbolize(p, []*gosym.Table{tab}, profiles.WithWrappers()); err != nil || st.Removed != 0 || len(p.Location) != 5 {
		t.Errorf("WithWrappers: %+v, %v", st, err)
	}
}

// callersInlined is inlined into callersOuter: runtime.Callers then
// returns a made-up PC for callersOuter's frame after the real one.
func callersInlined(pcs []uintptr) int { return runtime.Callers(1, pcs) }

//go:noinline
func callersOuter(pcs []uintptr) int { return callersInlined(pcs) }

// TestCallersStack symbolizes a stack of runtime.Callers PCs, one
// location per PC (as runtime/pprof of Go 1.12 and 1.13 recorded them),
// in which an inlined call's caller has a location of its own: each
// location must keep its innermost frame only, so that the frames are
// runtime.CallersFrames's, none twice.
func TestCallersStack(t *testing.T) {
	_, tab := selfProfile(t)
	pcs := make([]uintptr, 64)
	pcs = pcs[:callersOuter(pcs)]
	var want []frame
	frs := runtime.CallersFrames(pcs)
	for {
		fr, more := frs.Next()
		want = append(want, frame{Function: fr.Function, File: fr.File, Line: int64(fr.Line)})
		if !more {
			break
		}
	}
	if inl, _ := tab.ResolveLocations(uint64(pcs[0]-1), nil); len(inl) < 2 || inl[0].Function != "github.com/gosym-dev/gosym/profiles_test.callersInlined" {
		t.Fatalf("callersInlined is not inlined: %v", inl)
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	sm := &profile.Sample{Value: []int64{1}}
	for i, pc := range pcs {
		l := &profile.Location{ID: uint64(i + 1), Address: uint64(pc - 1)} // link-time addresses, no mapping
		p.Location = append(p.Location, l)
		sm.Location = append(sm.Location, l)
	}
	p.Sample = []*profile.Sample{sm}
	if _, err := profiles.Symbolize(p, []*gosym.Table{tab}); err != nil {
		t.Fatal(err)
	}
	var got []frame
	for _, l := range p.Sample[0].Location {
		for _, f := range frames(l.Line) {
			got = append(got, frame{Function: f.Function, File: f.File, Line: f.Line})
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("frames:\n%v\nruntime.CallersFrames:\n%v", got, want)
	}
}
