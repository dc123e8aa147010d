package gosym

import (
	"slices"
	"strings"
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
// directly or not, once each, in the order of f's inline tree (see
// InlinedCalls): the functions of its nodes without repeats.
func (f Function) InlineFunctions(buf []InlineFunction) ([]InlineFunction, error) {
	buf = buf[:0]
	s := treePool.Get().(*treeScratch)
	defer treePool.Put(s)
	calls, err := f.InlinedCalls(s.calls)
	s.calls = calls
	if err != nil {
		return buf, err
	}
	// The first call of each name, with the file of the first call of
	// that name that has one; sorted by name, then by index.
	s.order = s.order[:0]
	for i := range int32(len(calls)) {
		s.order = append(s.order, i)
	}
	slices.SortStableFunc(s.order, func(a, b int32) int { return strings.Compare(calls[a].Name, calls[b].Name) })
	keep := s.order[:0]
	for i := 0; i < len(s.order); {
		first := s.order[i]
		j := i
		for ; j < len(s.order) && calls[s.order[j]].Name == calls[first].Name; j++ {
			if calls[first].File == "" {
				calls[first].File = calls[s.order[j]].File
			}
		}
		keep = append(keep, first)
		i = j
	}
	slices.Sort(keep)
	for _, ix := range keep {
		c := &calls[ix]
		buf = append(buf, InlineFunction{Name: c.Name, File: c.File, StartLine: c.StartLine})
	}
	return buf, nil
}
