package gosym

// Location is one logical frame at a PC: an inlined call, or the physical
// function that holds the PC.
type Location struct {
	Function  string // symbol name, verbatim as stored ("pkg.F[go.shape.int]")
	File      string // "" if unknown
	Line      uint32 // 0 if unknown
	StartLine uint32 // line of Function's func keyword; 0 when the binary does not record it
	// Wrapper reports a compiler-generated wrapper, a frame that runtime
	// tracebacks hide (see Function.Wrapper).
	Wrapper bool
}

// ResolveLocations appends to buf[:0] the source locations of pc, which
// must lie in f: the innermost inlined call first, f itself last. Each
// frame's file and line are computed as the runtime does: the innermost at
// pc, each outer one at the call site of the inlined call inside it.
func (f Function) ResolveLocations(pc uint64, buf []Location) ([]Location, error) {
	buf = buf[:0]
	if f.t == nil {
		return buf, ErrPCNotFound
	}
	if f.t.closed.Load() {
		return buf, ErrClosed
	}
	if pc < f.entry || pc >= f.End() {
		return buf, &pcError{pc: pc, f: f.Name()}
	}
	u, err := newInlineUnwinder(f)
	if err != nil {
		return buf, err
	}
	fr, err := u.at(pc)
	for err == nil && fr.inlined() {
		buf = append(buf, u.location(fr))
		fr, err = u.caller(fr)
	}
	if err != nil {
		return buf[:0], err
	}
	return append(buf, u.location(fr)), nil
}

// An inlineUnwinder walks the logical frames at a PC of one physical
// function, from the innermost inlined call out to the function itself,
// as the runtime's inlineUnwinder (runtime/symtabinl.go) does:
//
//	u, err := newInlineUnwinder(f)
//	fr, err := u.at(pc)
//	for err == nil && fr.inlined() {
//		// fr is inlined call fr.ix, at fr.file:fr.line
//		fr, err = u.caller(fr)
//	}
//	// fr is f's own frame
//
// It reads positions from f's decoded line tables when the Table's line
// cache holds them (linecache.go), and from f's pc-value tables otherwise;
// the answers are the same.
type inlineUnwinder struct {
	f       Function
	lines   *funcLines // f's decoded line tables; nil to read f's tables
	tree    inlineTree // f's inline tree, when hasTree
	hasTree bool
}

// inlineFrame is one frame of an inlineUnwinder's walk.
type inlineFrame struct {
	file  string
	line  uint32
	ix    int32       // the inlined call whose code this is; -1: f's own code
	call  inlinedCall // the record of ix
	depth int         // frames walked before this one
}

// inlined reports whether fr is an inlined call, not the physical frame.
func (fr inlineFrame) inlined() bool { return fr.ix >= 0 }

// newInlineUnwinder returns an unwinder over f.
func newInlineUnwinder(f Function) (inlineUnwinder, error) {
	u := inlineUnwinder{f: f, lines: f.t.lines.get(f)}
	if u.lines != nil {
		u.tree, u.hasTree = u.lines.tree, u.lines.hasTree
		return u, nil
	}
	var err error
	u.tree, u.hasTree, err = f.inlineTree()
	return u, err
}

// at returns the innermost frame at pc.
func (u *inlineUnwinder) at(pc uint64) (inlineFrame, error) {
	var fr inlineFrame
	fr.file, fr.line, fr.ix = u.position(pc)
	return fr, u.decode(&fr)
}

// caller returns the frame that made inlined call fr: the frame at its
// call site.
func (u *inlineUnwinder) caller(fr inlineFrame) (inlineFrame, error) {
	if fr.depth+1 == maxInlineDepth {
		return fr, u.f.formatError(errTreeCycle)
	}
	c := fr.call
	var next inlineFrame
	if u.f.t.layout.inlKind == inl19 {
		// Go 1.9–1.11 record the call site in the record itself.
		next = inlineFrame{file: u.f.t.globalFile(c.file), line: uint32(max(c.line, 0)), ix: max(c.parent, -1)}
	} else {
		next.file, next.line, next.ix = u.position(u.f.entry + uint64(c.parentPC))
	}
	next.depth = fr.depth + 1
	return next, u.decode(&next)
}

// decode reads the record of fr's inlined call, if it is one.
func (u *inlineUnwinder) decode(fr *inlineFrame) error {
	if !fr.inlined() {
		return nil
	}
	c, ok := u.f.record(u.tree, fr.ix)
	if !ok {
		return u.f.formatError(errBadRecord)
	}
	fr.call = c
	return nil
}

// position returns the file, line and innermost inline index (-1: none)
// at pc.
func (u *inlineUnwinder) position(pc uint64) (string, uint32, int32) {
	if u.lines != nil {
		return u.lines.position(u.f, pc)
	}
	f := u.f
	file, line := f.fileLine(pc)
	ix := int32(-1)
	if u.hasTree {
		ix = max(f.t.pcvalue(u.tree.index, f.entry, pc), -1)
	}
	return file, line, ix
}

// location returns the Location of frame fr.
func (u *inlineUnwinder) location(fr inlineFrame) Location {
	f, fl := u.f, u.lines
	if fr.inlined() {
		loc := Location{File: fr.file, Line: fr.line, StartLine: uint32(max(fr.call.startLine, 0)), Wrapper: f.wrapperCall(fr.call)}
		name, ok := "", false
		if fl != nil {
			name, ok = fl.callName(f, fr.ix)
		}
		if !ok {
			name = f.callName(fr.call)
		}
		loc.Function = name
		return loc
	}
	if fl != nil {
		return Location{Function: fl.funcName(f), File: fr.file, Line: fr.line, StartLine: fl.startLine, Wrapper: fl.wrapper}
	}
	return Location{Function: f.Name(), File: fr.file, Line: fr.line, StartLine: f.StartLine(), Wrapper: f.Wrapper()}
}
