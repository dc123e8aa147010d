package gosym

import (
	"cmp"
	"slices"
	"sync"
)

// An inline tree (FORMAT.md, "Inline trees") is an array of records in the
// function's FUNCDATA_InlTree, one per call the compiler inlined into it;
// its PCDATA_InlTreeIndex table gives, at each PC, the index of the
// innermost inlined call covering it, or -1. Callers are added to a tree
// before their callees, so a parent's index is below its children's.

// InlinedCall is one node of a function's inline tree: one call that the
// compiler inlined.
type InlinedCall struct {
	Name string // the inlined function
	// File is the file of the inlined function's body, as
	// InlineFunction.File.
	File      string
	StartLine uint32 // line of Name's func keyword; 0 when the binary does not record it (before Go 1.20)
	// Parent is the index, in the same slice, of the inlined call this one
	// sits in; -1 when the call is in the physical function's own code.
	Parent int
	// CallFile and CallLine are the call site, in the code of the parent
	// (or of the physical function).
	CallFile string
	CallLine uint32
	// ParentPC is a PC in the code of the parent (or of the physical
	// function) whose position is the call site: ResolveLocations there
	// gives the outer frames. 0 for Go 1.9–1.11, whose records store the
	// call site itself.
	ParentPC uint64
	// Wrapper reports a call to a compiler-generated wrapper, a frame
	// that runtime tracebacks hide (see Function.Wrapper).
	Wrapper bool
}

// maxInlineDepth bounds the walk from an inlined call to its physical
// function. Each step of the walk goes to a lower index (so a cyclic tree
// ends at its first step back), and reads the function's decoded line
// tables from cacheDepth steps on; where they cannot be cached, each step
// decodes up to three pc-value tables, and the bound keeps a lookup in a
// damaged tree whose indices merely decrease from a large one to a fixed
// multiple of the function's size. Real trees are a few calls deep.
const maxInlineDepth = 1 << 10

// inlinedCall is an inline tree record, whatever its version.
type inlinedCall struct {
	funcID    uint8
	nameOff   uint32 // into the table's names
	parentPC  uint32 // offset from the entry of a PC at the call site (1.12+)
	startLine int32  // 1.20+
	parent    int32  // index of the caller's record, -1 for none (before 1.20)
	file      int32  // call-site file (before 1.20)
	line      int32  // call-site line (before 1.20)
}

// inlineTree is the inline tree of one function.
type inlineTree struct {
	index uint32 // offset of the InlTreeIndex pc-value table
	recs  []byte // the records, from the first to the end of mapped data
}

// inlineTree returns f's inline tree; ok is false if f has none.
func (f Function) inlineTree() (tree inlineTree, ok bool, err error) {
	l := &f.t.layout
	if l.inlKind == inlNone {
		return inlineTree{}, false, nil
	}
	index := f.pcdata(l.pcdataInlIndex)
	addr, ok := f.funcdata(l.funcdataInlTree)
	if index == 0 || !ok {
		return inlineTree{}, false, nil
	}
	recs := f.t.mem.From(addr)
	if recs == nil {
		return inlineTree{}, false, f.formatError(errTreeOutside)
	}
	return inlineTree{index: index, recs: recs}, true, nil
}

// Messages of the FormatErrors of lookups: constants, so that an error
// costs one small allocation whatever the damage.
const (
	errTreeOutside = "inline tree is not in the file"
	errBadRecord   = "inline record out of range or unnamed"
	errTreeDeep    = "inline tree is deeper than 1024 calls"
	errTreeOrder   = "inline tree lists a call before its caller"
)

// formatError returns a FormatError about f's data. The Table keeps the
// last one made and hands it out again for the same function and message:
// errors do not change, and a pass of lookups over a damaged function
// then makes one.
func (f Function) formatError(msg string) error {
	name := f.Name()
	if e := f.t.lastError.Load(); e != nil && e.Msg == msg && e.Func == name {
		return e
	}
	e := &FormatError{Func: name, Off: -1, Msg: msg}
	f.t.lastError.Store(e)
	return e
}

// record decodes record ix of the tree. ok is false if the record is
// outside the tree's data or names no function (its name is outside the
// table or not NUL-terminated within maxString bytes).
func (f Function) record(tree inlineTree, ix int32) (c inlinedCall, ok bool) {
	l := &f.t.layout
	size := uint64(l.inlRecordSize)
	off := uint64(ix) * size
	if ix < 0 || off+size > uint64(len(tree.recs)) {
		return inlinedCall{}, false
	}
	rd := f.t.hdr.rd
	r := tree.recs[off : off+size]
	switch l.inlKind {
	case inl19:
		c.parent, c.file, c.line = int32(rd.u32(r)), int32(rd.u32(r[4:])), int32(rd.u32(r[8:]))
		c.nameOff = rd.u32(r[12:])
	case inl112:
		c.parent, c.funcID = int32(int16(rd.u16(r))), r[2]
		c.file, c.line = int32(rd.u32(r[4:])), int32(rd.u32(r[8:]))
		c.nameOff, c.parentPC = rd.u32(r[12:]), rd.u32(r[16:])
	case inl120:
		c.funcID, c.parent = r[0], -1
		c.nameOff, c.parentPC, c.startLine = rd.u32(r[4:]), rd.u32(r[8:]), int32(rd.u32(r[12:]))
	}
	_, named := f.t.names.lookup(uint64(c.nameOff))
	return c, named
}

// callName returns the inlined function's name.
func (f Function) callName(c inlinedCall) string { return f.t.names.at(uint64(c.nameOff)) }

// wrapperCall reports whether an inlined call is to a compiler-generated
// wrapper.
func (f Function) wrapperCall(c inlinedCall) bool {
	return uint32(c.funcID) == f.t.wrapperID()
}

// InlinedCalls appends to buf[:0] f's inline tree, one entry per inlined
// call, parents before children. Every Go release that records inlining
// (1.9 and later) is covered; before that, and for a function into which
// nothing was inlined, the tree is empty. FunctionLine.Call indexes it.
//
// A function's inline tree, printed with its call sites:
//
//	calls, err := f.InlinedCalls(nil)
//	for i, c := range calls {
//		depth := 0
//		for p := c.Parent; p >= 0; p = calls[p].Parent {
//			depth++
//		}
//		fmt.Printf("%d %*s%s called at %s:%d\n", i, 2*depth, "", c.Name, c.CallFile, c.CallLine)
//	}
func (f Function) InlinedCalls(buf []InlinedCall) ([]InlinedCall, error) {
	buf = buf[:0]
	if f.t == nil {
		return buf, ErrPCNotFound
	}
	if f.t.closed.Load() {
		return buf, ErrClosed
	}
	tree, ok, err := f.inlineTree()
	if !ok || err != nil {
		return buf, err
	}
	// The tree has one more record than the largest index the table
	// uses (a call whose code is gone entirely may sit below it, never
	// above: callers are added before callees).
	n := int32(-1)
	for it := f.rangeIter(tree.index); it.next(); {
		n = max(n, it.val)
	}
	n++
	if uint64(n)*uint64(f.t.layout.inlRecordSize) > uint64(len(tree.recs)) {
		return buf, f.formatError(errBadRecord)
	}
	s := treePool.Get().(*treeScratch)
	defer treePool.Put(s)
	s.sites = s.sites[:0]
	for ix := range n {
		c, ok := f.record(tree, ix)
		if !ok {
			return buf[:0], f.formatError(errBadRecord)
		}
		call := InlinedCall{Name: f.callName(c), StartLine: uint32(max(c.startLine, 0)), Parent: -1, Wrapper: f.wrapperCall(c)}
		if f.t.layout.inlKind == inl19 {
			// The record names its parent and call site.
			call.Parent = int(c.parent)
			call.CallFile, call.CallLine = f.t.globalFile(c.file), uint32(max(c.line, 0))
		} else {
			call.ParentPC = f.entry + uint64(c.parentPC)
			s.sites = append(s.sites, callSite{call.ParentPC, ix})
		}
		buf = append(buf, call)
	}
	l := &f.t.layout
	if l.inlKind != inl19 {
		// The parent is the inlined call at the call site's PC, and the
		// call site is that PC's position: one walk over the tables, in
		// PC order.
		slices.SortFunc(s.sites, func(a, b callSite) int { return cmp.Compare(a.pc, b.pc) })
		inl, files, lines := f.rangeIter(tree.index), f.rangeIter(f.field(l.pcfile)), f.rangeIter(f.field(l.pcln))
		for _, st := range s.sites {
			c := &buf[st.k]
			c.Parent = int(max(inl.at(st.pc), -1))
			c.CallFile, c.CallLine = f.fileName(files.at(st.pc)), uint32(max(lines.at(st.pc), 0))
		}
	}
	for k, c := range buf {
		if c.Parent >= k || c.Parent < -1 {
			return buf[:0], f.formatError(errTreeOrder)
		}
	}

	// The file of each inlined call's body: where it has code of its own,
	// the file there; else the file at the call site, inside it, of its
	// first callee that has one.
	files, inl := f.rangeIter(f.field(l.pcfile)), f.rangeIter(tree.index)
	for inl.next() {
		if ix := inl.val; ix >= 0 && ix < n && inl.lo < inl.hi && buf[ix].File == "" {
			buf[ix].File = f.fileName(files.at(inl.lo))
		}
	}
	for _, c := range buf {
		if p := c.Parent; p >= 0 && buf[p].File == "" {
			buf[p].File = c.CallFile
		}
	}
	return buf, nil
}

// treeScratch is the working memory of InlinedCalls and InlineFunctions,
// pooled so that calls in steady state do not allocate. Every pass over
// the records is linear or n log n: a damaged table can claim as many
// records as the bytes after its tree hold.
type treeScratch struct {
	sites []callSite
	calls []InlinedCall
	order []int32
}

// callSite is the call site of inlined call k, at pc.
type callSite struct {
	pc uint64
	k  int32
}

var treePool = sync.Pool{New: func() any { return new(treeScratch) }}
