package gosym

// An inline tree (spec §5) is an array of inlinedCall records in the
// function's FUNCDATA_InlTree; its PCDATA_InlTreeIndex table gives, at each
// PC, the index of the innermost inlined call covering it, or -1.

// maxInlineDepth bounds the walk from an inlined call to its physical
// function, so that a corrupt tree whose parent PCs form a cycle ends.
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
	l := &f.t.l
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
		return inlineTree{}, false, corrupt("%s: inline tree at %#x is not in the file", f.Name(), addr)
	}
	return inlineTree{index: index, recs: recs}, true, nil
}

// call decodes record ix of the tree.
func (f Function) call(tree inlineTree, ix int32) (inlinedCall, error) {
	l := &f.t.l
	size := uint64(l.inlRecordSize)
	off := uint64(ix) * size
	if ix < 0 || off+size > uint64(len(tree.recs)) {
		return inlinedCall{}, corrupt("%s: inline index %d out of range", f.Name(), ix)
	}
	rd := f.t.h.rd
	r := tree.recs[off : off+size]
	var c inlinedCall
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
	if uint64(c.nameOff) >= uint64(len(f.t.h.names)) {
		return inlinedCall{}, corrupt("%s: inline record %d: name offset out of range", f.Name(), ix)
	}
	return c, nil
}

// callName returns the inlined function's name.
func (f Function) callName(c inlinedCall) string { return f.t.names.at(uint64(c.nameOff)) }

// wrapperCall reports whether an inlined call is to a compiler-generated
// wrapper.
func (f Function) wrapperCall(c inlinedCall) bool {
	return uint32(c.funcID) == f.t.wrapperID()
}
