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
	fl := f.funcLines()  // nil: f is not in the line cache
	var tree *inlineTree // nil: f has no inlined calls
	if fl != nil {
		if fl.hasTree {
			tree = &fl.tree
		}
	} else {
		t, ok, err := f.inlineTree()
		if err != nil {
			return buf, err
		}
		if ok {
			tree = &t
		}
	}
	file, line, ix := fl.at(f, tree, pc)
	for depth := 0; ix >= 0; depth++ {
		if depth == maxInlineDepth {
			return buf[:0], corrupt("%s: inline tree at pc %#x is cyclic", f.Name(), pc)
		}
		c, err := f.call(*tree, ix)
		if err != nil {
			return buf[:0], err
		}
		buf = append(buf, Location{
			Function:  fl.callName(f, ix, c),
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
		file, line, ix = fl.at(f, tree, pc)
	}
	if fl != nil {
		return append(buf, Location{Function: fl.funcName(f), File: file, Line: line, StartLine: fl.startLine, Wrapper: fl.wrapper}), nil
	}
	return append(buf, Location{Function: f.Name(), File: file, Line: line, StartLine: f.StartLine(), Wrapper: f.Wrapper()}), nil
}

// position returns the file, line and inline index (-1: none) at pc,
// decoded from f's pc-value tables and inline tree (nil: none).
func (f Function) position(tree *inlineTree, pc uint64) (string, uint32, int32) {
	file, line := f.fileLine(pc)
	ix := int32(-1)
	if tree != nil {
		ix = f.t.pcvalue(tree.index, f.entry, pc)
	}
	return file, line, ix
}
