package gosym

// InlineFunction is a function inlined somewhere into a physical function.
type InlineFunction struct {
	Name string
	// File is the file of the inlinee's body, as recorded at the PCs
	// attributed to it (its own instructions, or the call sites inside it
	// of deeper inlinees); "" only if it has no PC at all.
	File      string
	StartLine uint32 // 0 before Go 1.20
}

// InlineFunctions appends to buf[:0] every function inlined into f,
// directly or not, once each, in the order of f's inline tree.
func (f Function) InlineFunctions(buf []InlineFunction) ([]InlineFunction, error) {
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
	// The tree has one more record than the largest index the table uses:
	// callers are added to a tree before their callees.
	n := int32(-1)
	for it := f.rangeIter(tree.index); it.next(); {
		n = max(n, it.val)
	}
	n++
	if uint64(n)*uint64(f.t.l.inlRecordSize) > uint64(len(tree.recs)) {
		return buf, corrupt("%s: inline tree of %d records does not fit", f.Name(), n)
	}
	for ix := int32(0); ix < n; ix++ {
		c, err := f.call(tree, ix)
		if err != nil {
			return buf[:0], err
		}
		buf = append(buf, InlineFunction{Name: f.callName(c), StartLine: uint32(max(c.startLine, 0))})
	}

	// The file of each inlinee's own code.
	l := &f.t.l
	files, inl := f.rangeIter(f.field(l.pcfile)), f.rangeIter(tree.index)
	for inl.next() {
		if ix := inl.val; ix >= 0 && ix < n && inl.lo < inl.hi && buf[ix].File == "" {
			buf[ix].File = f.fileName(files.at(inl.lo))
		}
	}
	// An inlinee with no code of its own: the file at a call site inside it.
	for ix := int32(0); ix < n; ix++ {
		if buf[ix].File != "" {
			continue
		}
		for k := ix + 1; k < n && buf[ix].File == ""; k++ {
			c, _ := f.call(tree, k)
			switch l.inlKind {
			case inl19:
				if c.parent == ix {
					buf[ix].File = f.t.globalFile(c.file)
				}
			default:
				pc := f.entry + uint64(c.parentPC)
				if f.t.pcvalue(tree.index, f.entry, pc) == ix {
					buf[ix].File, _ = f.fileLine(pc)
				}
			}
		}
	}

	// Keep the first record of each function, with a file from a later
	// one if it has none.
	out := buf[:0]
	for _, in := range buf {
		dup := false
		for j := range out {
			if out[j].Name == in.Name {
				if out[j].File == "" {
					out[j].File = in.File
				}
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, in)
		}
	}
	return out, nil
}
