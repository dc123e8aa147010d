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
	var u inlineUnwinder
	if err := u.init(f); err != nil {
		return buf, err
	}
	fr := u.at(pc)
	for depth := 0; fr.inlined(); depth++ {
		c, ok := f.record(u.tree, fr.ix)
		if !ok {
			return buf[:0], f.formatError(errBadRecord)
		}
		if depth == maxInlineDepth {
			return buf[:0], f.formatError(errTreeDeep)
		}
		buf = append(buf, Location{
			Function:  u.callName(fr.ix, c),
			File:      fr.file,
			Line:      fr.line,
			StartLine: uint32(max(c.startLine, 0)),
			Wrapper:   f.wrapperCall(c),
		})
		ix := fr.ix
		if depth == cacheDepth && u.lines == nil {
			// A deep walk: decode f's tables once, rather than again
			// at each further step.
			u.decode()
		}
		if fr, ok = u.caller(c); !ok {
			return buf[:0], f.formatError(errBadRecord)
		}
		if fr.ix >= ix {
			// A caller is added to the tree before its callees: its
			// index is lower. This also ends a cyclic tree at its
			// first step back.
			return buf[:0], f.formatError(errTreeOrder)
		}
	}
	name, startLine, wrapper := u.function()
	return append(buf, Location{Function: name, File: fr.file, Line: fr.line, StartLine: startLine, Wrapper: wrapper}), nil
}

// An inlineUnwinder walks the logical frames at a PC of one physical
// function, from the innermost inlined call out to the function itself,
// as the runtime's inlineUnwinder (runtime/symtabinl.go) does:
//
//	var u inlineUnwinder
//	err := u.init(f)
//	for fr := u.at(pc); fr.inlined(); {
//		c, ok := f.record(u.tree, fr.ix) // the inlined call; fr is where in it
//		fr, ok = u.caller(c)             // its call site: a lower index
//	}
//	// fr is the position in f's own code
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

// inlineFrame is one frame of the walk: a position in the code of
// inlined call ix, or of the physical function when ix is -1.
type inlineFrame struct {
	file string
	line uint32
	ix   int32
}

// inlined reports whether fr is in an inlined call, not in the physical
// function's own code.
func (fr inlineFrame) inlined() bool { return fr.ix >= 0 }

// init sets u up to walk the frames of f.
func (u *inlineUnwinder) init(f Function) (err error) {
	u.f, u.lines = f, f.t.lines.get(f, false)
	if u.lines != nil {
		u.tree, u.hasTree = u.lines.tree, u.lines.hasTree
		return nil
	}
	u.tree, u.hasTree, err = f.inlineTree()
	return err
}

// cacheDepth is the depth of an inline walk from which ResolveLocations
// reads the function's decoded line tables, decoding them (into the line
// cache) if they are not yet: each step of a walk from the tables decodes
// up to three tables from the entry, and real inline trees are a few
// calls deep (six in the go command and the compiler), while a damaged
// tree can chain up to maxInlineDepth calls. A lookup then decodes each
// table at most cacheDepth+1 times, unless the function cannot be cached
// (the cache is full, or its tables do not fit a funcLines).
const cacheDepth = 4

// decode switches u to f's decoded line tables, if the line cache can
// hold them. The answers do not change.
func (u *inlineUnwinder) decode() {
	if fl := u.f.t.lines.get(u.f, true); fl != nil {
		u.lines = fl
	}
}

// at returns the innermost frame at pc.
func (u *inlineUnwinder) at(pc uint64) inlineFrame {
	if u.lines != nil {
		return u.lines.position(u.f, pc)
	}
	f := u.f
	file, line := f.fileLine(pc)
	ix := int32(-1)
	if u.hasTree {
		ix = max(f.t.pcvalue(u.tree.index, f.entry, pc), -1)
	}
	return inlineFrame{file, line, ix}
}

// caller returns the frame that made inlined call c: its call site. ok
// is false if the call site's PC lies outside the function.
func (u *inlineUnwinder) caller(c inlinedCall) (fr inlineFrame, ok bool) {
	if u.f.t.layout.inlKind == inl19 {
		// Go 1.9–1.11 record the call site in the record itself.
		return inlineFrame{u.f.t.globalFile(c.file), uint32(max(c.line, 0)), max(c.parent, -1)}, true
	}
	pc := u.f.entry + uint64(c.parentPC)
	if pc >= u.f.End() {
		return inlineFrame{}, false
	}
	return u.at(pc), true
}

// callName returns the name of inlined call ix, whose record is c.
func (u *inlineUnwinder) callName(ix int32, c inlinedCall) string {
	if u.lines != nil {
		if name, ok := u.lines.callName(u.f, ix); ok {
			return name
		}
	}
	return u.f.callName(c)
}

// function returns the name, start line and wrapper flag of the physical
// function.
func (u *inlineUnwinder) function() (name string, startLine uint32, wrapper bool) {
	if fl := u.lines; fl != nil {
		return fl.funcName(u.f), fl.startLine, fl.wrapper
	}
	f := u.f
	return f.Name(), f.StartLine(), f.Wrapper()
}
