package gosym

import "iter"

// Functions yields every physical function of the table in address order.
// It stops after yielding an error for a corrupt record.
func (t *Table) Functions() iter.Seq2[Function, error] {
	return func(yield func(Function, error) bool) {
		if t.closed.Load() {
			yield(Function{}, ErrClosed)
			return
		}
		for i := uint64(0); i < t.hdr.nfunc; i++ {
			f, ok, err := t.funcAt(i)
			if err != nil {
				yield(Function{}, err)
				return
			}
			if ok && !yield(f, nil) {
				return
			}
		}
	}
}

// ResolveFunction returns the physical function that holds pc.
func (t *Table) ResolveFunction(pc uint64) (Function, error) {
	if t.closed.Load() {
		return Function{}, ErrClosed
	}
	// The common case: the findfunctab names the entry, whose record was
	// checked before (see funcAt).
	if i, entryOff, funcOff, ok := t.funcIndex.find(t.hdr.functab, pc); ok && t.valid.has(i) {
		return Function{t: t, entry: t.funcIndex.text + uint64(entryOff), off: funcOff, idx: uint32(i)}, nil
	}
	i, ok := t.findFunc(pc)
	if !ok {
		return Function{}, &pcError{pc: pc}
	}
	f, ok, err := t.funcAt(i)
	if err != nil {
		return Function{}, err
	}
	if !ok {
		return Function{}, &pcError{pc: pc}
	}
	return f, nil
}

// ResolveLocations appends to buf[:0] the source locations of pc: the
// innermost inlined call first, the physical function last. It is
// ResolveFunction followed by Function.ResolveLocations.
func (t *Table) ResolveLocations(pc uint64, buf []Location) ([]Location, error) {
	f, err := t.ResolveFunction(pc)
	if err != nil {
		return buf[:0], err
	}
	return f.ResolveLocations(pc, buf)
}
