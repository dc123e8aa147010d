package gosym

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

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
	files, inl := f.rangeIter(f.field(f.t.l.pcfile)), f.rangeIter(tree.index)
	for inl.next() {
		if ix := inl.val; ix >= 0 && ix < n && inl.lo < inl.hi && buf[ix].File == "" {
			buf[ix].File = f.fileName(files.at(inl.lo))
		}
	}
	// An inlinee with no code of its own: the file at a call site in it.
	s := inlinePool.Get().(*inlineScratch)
	defer inlinePool.Put(s)
	f.callSiteFiles(tree, buf, s)
	return dedupInlines(buf, s), nil
}

// inlineScratch is the working memory of InlineFunctions, pooled so that
// calls in steady state do not allocate. Every pass over the records is
// linear or n log n: a damaged table can claim as many records as the
// bytes after its tree hold.
type inlineScratch struct {
	sites []callSite
	best  []int32
	files []string
	order []int32
}

// callSite is the call site of inlined call k, at pc.
type callSite struct {
	pc uint64
	k  int32
}

var inlinePool = sync.Pool{New: func() any { return new(inlineScratch) }}

// callSiteFiles gives each inlinee of buf that has no code of its own the
// file at the call site of its first callee (the lowest record) that has
// one.
func (f Function) callSiteFiles(tree inlineTree, buf []InlineFunction, s *inlineScratch) {
	n := int32(len(buf))
	s.best, s.files = resize(s.best, int(n)), resize(s.files, int(n))
	for i := range s.best {
		s.best[i], s.files[i] = n, ""
	}
	// consider offers p, the parent of call k, the file at k's call site.
	consider := func(p, k int32, file string) {
		if p >= 0 && p < k && buf[p].File == "" && k < s.best[p] && file != "" {
			s.best[p], s.files[p] = k, file
		}
	}
	if f.t.l.inlKind == inl19 {
		// The records name their parents and call sites.
		for k := range n {
			c, _ := f.call(tree, k)
			consider(c.parent, k, f.t.globalFile(c.file))
		}
	} else {
		// The parent is the inlined call at the call site's PC: one walk
		// over the index and file tables, in PC order.
		s.sites = s.sites[:0]
		for k := range n {
			c, _ := f.call(tree, k)
			s.sites = append(s.sites, callSite{f.entry + uint64(c.parentPC), k})
		}
		slices.SortFunc(s.sites, func(a, b callSite) int { return cmp.Compare(a.pc, b.pc) })
		inl, files := f.rangeIter(tree.index), f.rangeIter(f.field(f.t.l.pcfile))
		for _, st := range s.sites {
			consider(inl.at(st.pc), st.k, f.fileName(files.at(st.pc)))
		}
	}
	for p, k := range s.best {
		if k < n {
			buf[p].File = s.files[p]
		}
	}
}

// dedupInlines keeps the first record of each function in buf, in order,
// with the file of the first record of that function that has one.
func dedupInlines(buf []InlineFunction, s *inlineScratch) []InlineFunction {
	s.order = s.order[:0]
	for i := range int32(len(buf)) {
		s.order = append(s.order, i)
	}
	slices.SortStableFunc(s.order, func(a, b int32) int { return strings.Compare(buf[a].Name, buf[b].Name) })
	s.best = resize(s.best, len(buf))
	keep := s.best // 1: the first record of its name
	for i, ix := range s.order {
		first := i == 0 || buf[s.order[i-1]].Name != buf[ix].Name
		keep[ix] = 0
		if first {
			keep[ix] = 1
			for j := i; j < len(s.order) && buf[s.order[j]].Name == buf[ix].Name && buf[ix].File == ""; j++ {
				buf[ix].File = buf[s.order[j]].File
			}
		}
	}
	out := buf[:0]
	for i, in := range buf {
		if keep[i] == 1 {
			out = append(out, in)
		}
	}
	return out
}

// resize returns s with length n, reusing its memory if it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
