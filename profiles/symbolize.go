package profiles

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
)

// Stats says what Symbolize did.
type Stats struct {
	Locations  int // locations of the profile before symbolization
	Symbolized int // locations given frames from a binary
	Symbols    int // locations in no Go function, named from the object's function symbols
	NotGo      int // locations in a matched mapping but in no Go function nor function symbol, left as they were
	Unmatched  int // locations of mappings (or of no mapping) that no binary matched
	Removed    int // locations whose every frame was a hidden wrapper, removed from the samples
	// UnmatchedMappings lists, for each mapping no binary matched, its File (or
	// its BuildID when it names no file); mappings without a file
	// (anonymous memory, the vdso) are left out.
	UnmatchedMappings []string
}

// Symbolize gives the locations of p their frames, from the Go symbol
// tables of the binaries tabs, matched with p's mappings by build ID (see
// the package documentation). It changes p in place: the lines of every
// location of a matched mapping are replaced, its functions created, the
// mapping's HasFunctions, HasFilenames, HasLineNumbers and HasInlineFrames
// set. Locations of other mappings keep what they had.
//
// It returns an error if p or a table is nil or p has nil entries (which
// profile.Parse never makes), if a binary's object cannot be read, or if a
// table turns out to be corrupted (an error wrapping gosym.ErrCorrupted);
// p may then be partly symbolized. When p has locations but none of them
// is in a mapping of the binaries given (their build IDs differ from the
// profile's, say), it returns the Stats and an error wrapping ErrNoMatch
// that names the build IDs, and p is left as it was.
func Symbolize(p *profile.Profile, tabs []*gosym.Table, opts ...Option) (Stats, error) {
	if err := checkInput(p, tabs); err != nil {
		return Stats{}, err
	}
	o := makeOptions(opts)
	st := Stats{Locations: len(p.Location)}
	bins := make([]*binary, len(tabs))
	for i, tab := range tabs {
		b, err := newBinary(tab)
		if err != nil {
			return st, err
		}
		bins[i] = b
	}
	var mainBin *binary
	if o.main != nil {
		for _, b := range bins {
			if b.tab == o.main {
				mainBin = b
			}
		}
		if mainBin == nil {
			b, err := newBinary(o.main)
			if err != nil {
				return st, err
			}
			mainBin = b
		}
	}
	byMapping := matchMappings(p, bins, mainBin)
	for _, mp := range p.Mapping {
		if byMapping[mp] == nil && (mp.File != "" && mp.File[0] != '[' || mp.BuildID != "") {
			st.UnmatchedMappings = append(st.UnmatchedMappings, cmp.Or(mp.File, mp.BuildID))
		}
	}

	var caller map[*profile.Location]bool
	if o.returnAddresses {
		caller = callers(p)
	}
	s := symbolizer{funcs: make(map[funcKey]*profile.Function), nextID: maxFunctionID(p) + 1}
	hadFunctions := len(p.Function) > 0
	// The frames of p.Location[i], wrappers included, are
	// all[spans[i].lo:spans[i].hi]; lo < 0 for a location not resolved.
	all := make([]gosym.Location, 0, 2*len(p.Location))
	spans := make([]span, len(p.Location))
	innerWrapper := false // a location's innermost frame is a wrapper
	inlined := false      // a location has inlined frames
	var lastMp *profile.Mapping
	var lastB *binary
	for i, loc := range p.Location {
		spans[i] = span{lo: -1, hi: -1}
		b := lastB
		if loc.Mapping != lastMp || i == 0 {
			b = byMapping[loc.Mapping]
			if loc.Mapping == nil && len(p.Mapping) == 0 {
				// Link-time addresses: the main binary's, or the one
				// binary's.
				switch {
				case mainBin != nil:
					b = mainBin
				case len(bins) == 1:
					b = bins[0]
				}
			}
			lastMp, lastB = loc.Mapping, b
		}
		if b == nil {
			st.Unmatched++
			continue
		}
		pc, ok := b.linkAddr(loc.Mapping, loc.Address)
		if !ok {
			st.NotGo++
			continue
		}
		if caller[loc] && pc > 0 {
			pc--
		}
		var err error
		s.buf, err = b.tab.ResolveLocations(pc, s.buf[:0])
		switch {
		case errors.Is(err, gosym.ErrPCNotFound):
			// In no Go function (C code of a cgo binary): the object's
			// function symbol there names it, with no file or line;
			// without one the location is left as it is.
			name := b.symbolAt(pc)
			if name == "" {
				st.NotGo++
				continue
			}
			s.buf = append(s.buf[:0], gosym.Location{Function: name})
			st.Symbols++
		case err != nil:
			return st, err
		}
		spans[i] = span{len(all), len(all) + len(s.buf), pc, b}
		all = append(all, s.buf...)
		innerWrapper = innerWrapper || s.buf[0].Wrapper
		inlined = inlined || len(s.buf) > 1
		if err == nil {
			st.Symbolized++
		}
		if mp := loc.Mapping; mp != nil {
			mp.HasFunctions = true
			if err == nil {
				mp.HasFilenames, mp.HasLineNumbers, mp.HasInlineFrames = true, true, true
			}
		}
	}

	if st.Locations > 0 && st.Unmatched == st.Locations {
		return st, noMatch(p, bins, mainBin)
	}

	var index map[*profile.Location]int // p.Location's indices, when needed
	if inlined || !o.wrappers && innerWrapper {
		index = make(map[*profile.Location]int, len(p.Location))
		for i, loc := range p.Location {
			index[loc] = i
		}
	}
	if inlined {
		trimSplitStacks(p, all, spans, index)
	}
	var shown map[*profile.Location]bool
	if !o.wrappers && innerWrapper {
		shown = wrappersShown(p, all, spans, index)
	}
	var removed map[*profile.Location]bool
	lines := make([]profile.Line, 0, len(all)) // never grown: the locations' lines share it
	for i, loc := range p.Location {           // in order: function IDs do not depend on map order
		sp := spans[i]
		if sp.lo < 0 {
			continue
		}
		fr := all[sp.lo:sp.hi]
		start := len(lines)
		for i, f := range fr {
			if f.Wrapper && !o.wrappers && !(i > 0 && isPanic(fr[i-1].Function) || i == 0 && shown[loc]) {
				continue
			}
			lines = append(lines, profile.Line{Function: s.function(f), Line: int64(f.Line)})
		}
		loc.Line = lines[start:len(lines):len(lines)]
		if len(loc.Line) == 0 {
			if removed == nil {
				removed = make(map[*profile.Location]bool)
			}
			removed[loc] = true
		}
	}
	st.Removed = len(removed)
	if removed != nil {
		for _, sm := range p.Sample {
			sm.Location = slices.DeleteFunc(sm.Location, func(l *profile.Location) bool { return removed[l] })
		}
		p.Location = slices.DeleteFunc(p.Location, func(l *profile.Location) bool { return removed[l] })
	}
	p.Function = append(p.Function, s.added...)
	if hadFunctions {
		// Lines replaced here may have been the last users of some.
		removeUnusedFunctions(p)
	}
	return st, nil
}

// A span is the range of a location's frames in a slice of all frames,
// with the link-time address they were found at and its binary.
type span struct {
	lo, hi int
	pc     uint64
	b      *binary
}

// trimSplitStacks finds the locations whose inline stack the profile
// already spells out in the locations after them, as stacks made of
// runtime.Callers PCs do (runtime/pprof of Go 1.12 and 1.13 for every
// inlined call, and of later releases up to 1.20 for a few CPU samples):
// the outer frames of the inline stack get a location of their own, at a
// made-up PC, the call site of the innermost inlined call. Such a
// location is followed, in every sample that has it and a location after
// it, by a location of the same binary exactly at that call site whose
// frames are the rest of its own. It keeps its innermost frame only, as
// the runtime recorded it, so that no frame appears twice in a sample.
// The frames of p.Location[i] are all[spans[i].lo:spans[i].hi].
func trimSplitStacks(p *profile.Profile, all []gosym.Location, spans []span, index map[*profile.Location]int) {
	verdict := make(map[int]bool) // false sticks: a follower that does not fit
	var sc callSiteScratch
	callSite := make(map[int]uint64)
	for _, sm := range p.Sample {
		for k := 0; k+1 < len(sm.Location); k++ {
			i, ok1 := index[sm.Location[k]]
			j, ok2 := index[sm.Location[k+1]]
			if !ok1 || !ok2 {
				continue // a location not in p.Location, left as it is
			}
			a, n := spans[i], spans[j]
			if a.lo < 0 || a.hi-a.lo < 2 {
				continue
			}
			if v, seen := verdict[i]; seen && !v {
				continue
			}
			fits := n.lo >= 0 && n.b == a.b && n.hi-n.lo == a.hi-a.lo-1 && slices.Equal(all[a.lo+1:a.hi], all[n.lo:n.hi])
			if fits {
				cs, ok := callSite[i]
				if !ok {
					cs = innermostCallSite(a, &sc)
					callSite[i] = cs
				}
				fits = cs != 0 && cs == n.pc
			}
			verdict[i] = fits
		}
	}
	for i, v := range verdict {
		if v {
			spans[i].hi = spans[i].lo + 1
		}
	}
}

// innermostCallSite returns the PC of the call site of the innermost
// inlined call at a.pc (InlinedCall.ParentPC), 0 if unknown. sc holds
// the buffers it reuses.
func innermostCallSite(a span, sc *callSiteScratch) uint64 {
	fn, err := a.b.tab.ResolveFunction(a.pc)
	if err != nil {
		return 0
	}
	if sc.lines, err = fn.Lines(sc.lines); err != nil {
		return 0
	}
	for _, r := range sc.lines {
		if r.PCLo <= a.pc && a.pc < r.PCHi {
			if r.Call < 0 {
				return 0
			}
			if sc.calls, err = fn.InlinedCalls(sc.calls); err != nil || r.Call >= len(sc.calls) {
				return 0
			}
			return sc.calls[r.Call].ParentPC
		}
	}
	return 0
}

// callSiteScratch holds the buffers innermostCallSite reuses.
type callSiteScratch struct {
	lines []gosym.FunctionLine
	calls []gosym.InlinedCall
}

// symbolizer resolves PCs and makes the profile's functions.
type symbolizer struct {
	buf    []gosym.Location
	funcs  map[funcKey]*profile.Function
	added  []*profile.Function
	nextID uint64
}

type funcKey struct {
	name, file string
	start      uint32
}

// function returns the profile function of frame f, made on first use.
func (s *symbolizer) function(f gosym.Location) *profile.Function {
	k := funcKey{f.Function, f.File, f.StartLine}
	fn := s.funcs[k]
	if fn == nil {
		fn = &profile.Function{ID: s.nextID, Name: f.Function, SystemName: f.Function, Filename: f.File, StartLine: int64(f.StartLine)}
		s.nextID++
		s.funcs[k] = fn
		s.added = append(s.added, fn)
	}
	return fn
}

// isPanic reports whether a wrapper that called the function name is shown
// in tracebacks: the runtime's elideWrapperCalling (runtime/traceback.go)
// keeps wrappers that called gopanic, sigpanic or panicwrap.
func isPanic(name string) bool {
	switch name {
	case "runtime.gopanic", "runtime.sigpanic", "runtime.panicwrap":
		return true
	}
	return false
}

// wrappersShown returns the locations whose innermost frame is a wrapper
// that the runtime shows: one that, in some sample, called a panic
// function (the outermost frame of the location before it in the sample).
// A wrapper at the innermost location of a sample called nothing the
// runtime counts, and is hidden. The frames of p.Location[i] are
// all[spans[i].lo:spans[i].hi].
func wrappersShown(p *profile.Profile, all []gosym.Location, spans []span, index map[*profile.Location]int) map[*profile.Location]bool {
	frames := func(loc *profile.Location) []gosym.Location {
		i, ok := index[loc]
		if !ok {
			return nil // a location not in p.Location, left as it is
		}
		if sp := spans[i]; sp.lo >= 0 {
			return all[sp.lo:sp.hi]
		}
		return nil
	}
	var shown map[*profile.Location]bool
	for _, sm := range p.Sample {
		for k := 1; k < len(sm.Location); k++ {
			loc := sm.Location[k]
			fr := frames(loc)
			if len(fr) == 0 || !fr[0].Wrapper || shown[loc] {
				continue
			}
			// The callee: the outermost frame found for the location
			// before, or the one it already had.
			callee := ""
			if fr := frames(sm.Location[k-1]); len(fr) > 0 {
				callee = fr[len(fr)-1].Function
			} else if l := sm.Location[k-1].Line; len(l) > 0 && l[len(l)-1].Function != nil {
				callee = l[len(l)-1].Function.Name
			}
			if isPanic(callee) {
				if shown == nil {
					shown = make(map[*profile.Location]bool)
				}
				shown[loc] = true
			}
		}
	}
	return shown
}

// callers returns the locations that some sample has in a caller's
// position, not as its innermost location.
func callers(p *profile.Profile) map[*profile.Location]bool {
	m := make(map[*profile.Location]bool)
	for _, sm := range p.Sample {
		for _, loc := range sm.Location[min(1, len(sm.Location)):] {
			m[loc] = true
		}
	}
	return m
}

func maxFunctionID(p *profile.Profile) uint64 {
	var id uint64
	for _, f := range p.Function {
		id = max(id, f.ID)
	}
	return id
}

// removeUnusedFunctions drops the functions no location refers to.
func removeUnusedFunctions(p *profile.Profile) {
	used := make(map[*profile.Function]bool, len(p.Function))
	for _, loc := range p.Location {
		for _, ln := range loc.Line {
			used[ln.Function] = true
		}
	}
	p.Function = slices.DeleteFunc(p.Function, func(f *profile.Function) bool { return !used[f] })
}

// checkInput returns an error if p or one of tabs is nil, or if p has nil
// entries: profile.Parse makes none, but programs that build or edit
// profiles can.
func checkInput(p *profile.Profile, tabs []*gosym.Table) error {
	if p == nil {
		return errors.New("profiles: nil profile")
	}
	for i, t := range tabs {
		if t == nil {
			return fmt.Errorf("profiles: table %d of %d is nil", i, len(tabs))
		}
	}
	nilIn := func(what string, i int) error {
		return fmt.Errorf("profiles: malformed profile: %s[%d] is nil", what, i)
	}
	for i, mp := range p.Mapping {
		if mp == nil {
			return nilIn("Mapping", i)
		}
	}
	for i, fn := range p.Function {
		if fn == nil {
			return nilIn("Function", i)
		}
	}
	for i, loc := range p.Location {
		if loc == nil {
			return nilIn("Location", i)
		}
	}
	for i, sm := range p.Sample {
		if sm == nil {
			return nilIn("Sample", i)
		}
		for j, loc := range sm.Location {
			if loc == nil {
				return nilIn(fmt.Sprintf("Sample[%d].Location", i), j)
			}
		}
	}
	return nil
}

// ErrNoMatch reports a profile none of whose locations is in a mapping
// of the binaries given to Symbolize: their build IDs differ from the
// profile's, or the binaries are not the profile's. WithMain names the
// main mapping's binary whatever its build ID.
var ErrNoMatch = errors.New("no location is in a mapping of the binaries given")

// maxListed is how many binaries an ErrNoMatch error describes.
const maxListed = 4

// noMatch returns the error wrapping ErrNoMatch for p and the binaries
// given: the build ID of p's main mapping and those of the binaries.
func noMatch(p *profile.Profile, bins []*binary, main *binary) error {
	var msg strings.Builder
	if len(p.Mapping) == 0 {
		fmt.Fprintf(&msg, "the profile has no mapping, and %d binaries were given", len(bins))
	} else {
		mp := p.Mapping[0]
		fmt.Fprintf(&msg, "the main mapping %s has build ID %s", quoteShort(cmp.Or(mp.File, "(no file)")), quoteShort(mp.BuildID))
	}
	if main != nil && !slices.Contains(bins, main) {
		bins = append([]*binary{main}, bins...)
	}
	for i, b := range bins {
		if i == maxListed {
			fmt.Fprintf(&msg, "; and %d more binaries", len(bins)-i)
			break
		}
		fmt.Fprintf(&msg, "; binary %d has GNU build ID %s and Go build ID %s", i+1, quoteShort(b.gnu), quoteShort(b.goID))
	}
	return fmt.Errorf("profiles: %w: %s", ErrNoMatch, msg.String())
}

// maxQuoted is the most bytes of a string from a profile that quoteShort
// quotes.
const maxQuoted = 128

// quoteShort quotes s, or its first maxQuoted bytes and "...": profiles
// hold strings of any length.
func quoteShort(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "..."
	}
	return strconv.Quote(s)
}
