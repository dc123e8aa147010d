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
		return buf, ErrPCNotFound
	}
	src := positions{f: f, fl: f.funcLines()}
	if src.fl == nil {
		var err error
		if src.tree, src.hasTree, err = f.inlineTree(); err != nil {
			return buf, err
		}
	} else {
		src.tree, src.hasTree = src.fl.tree, src.fl.hasTree
	}
	file, line, ix := src.at(pc)
	for depth := 0; ix >= 0; depth++ {
		if depth == maxInlineDepth {
			return buf[:0], corrupt("%s: inline tree at pc %#x is cyclic", f.Name(), pc)
		}
		c, err := f.call(src.tree, ix)
		if err != nil {
			return buf[:0], err
		}
		buf = append(buf, Location{
			Function:  src.callName(ix, c),
			File:      file,
			Line:      line,
			StartLine: uint32(max(c.startLine, 0)),
			Wrapper:   f.wrapperCall(c),
		})
		if f.t.l.inlKind == inl19 {
			// Go 1.9–1.11 record the call site in the record itself.
			file, line = f.t.globalFile(c.file), uint32(max(c.line, 0))
			ix = c.parent
			continue
		}
		pc = f.entry + uint64(c.parentPC)
		file, line, ix = src.at(pc)
	}
	return append(buf, src.outermost(file, line)), nil
}

// positions gives ResolveLocations the file, line and inline index at the
// PCs of one function: from the line cache if it holds the function, from
// the pc-value tables otherwise.
type positions struct {
	f       Function
	fl      *funcLines // nil: not cached
	tree    inlineTree
	hasTree bool
}

// at returns the file, line and inline index (-1: none) at pc.
func (p *positions) at(pc uint64) (string, uint32, int32) {
	if p.fl != nil {
		return p.fl.at(p.f, pc-p.f.entry)
	}
	file, line := p.f.fileLine(pc)
	ix := int32(-1)
	if p.hasTree {
		ix = p.f.t.pcvalue(p.tree.index, p.f.entry, pc)
	}
	return file, line, ix
}

// callName returns the name of inlined call ix, whose record is c.
func (p *positions) callName(ix int32, c inlinedCall) string {
	if p.fl != nil {
		return p.fl.callName(p.f, ix, c)
	}
	return p.f.callName(c)
}

// outermost returns the frame of the function itself at file:line.
func (p *positions) outermost(file string, line uint32) Location {
	if p.fl != nil {
		return Location{Function: p.fl.funcName(p.f), File: file, Line: line, StartLine: p.fl.startLine, Wrapper: p.fl.wrapper}
	}
	return Location{Function: p.f.Name(), File: file, Line: line, StartLine: p.f.StartLine(), Wrapper: p.f.Wrapper()}
}
