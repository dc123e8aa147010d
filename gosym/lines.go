package gosym

import "math"

// FunctionLine is a PC range of constant function, file, line and
// innermost inlined call.
type FunctionLine struct {
	PCLo, PCHi uint64 // [PCLo, PCHi)
	Function   string // the function whose code this is: an inlinee or the physical function
	File       string // "" if unknown (as in alignment padding)
	Line       uint32 // 0 if unknown
	// Call is the index, in the function's InlinedCalls, of the innermost
	// inlined call at these PCs; -1 for the function's own code. That
	// InlinedCall holds the call site (CallFile, CallLine, ParentPC).
	Call int
}

// rangeIter walks a pc-value table as consecutive ranges that cover every
// PC from the entry on; past the end of the table the value is -1.
type rangeIter struct{ pcIter }

// at advances the walk to the range holding pc and returns its value.
func (r *rangeIter) at(pc uint64) int32 {
	for r.hi <= pc {
		if !r.next() {
			r.lo, r.hi, r.val = r.hi, math.MaxUint64, -1
		}
	}
	return r.val
}

// rangeIter starts walking f's table at off.
func (f Function) rangeIter(off uint32) rangeIter {
	return rangeIter{newPCIter(f.t.hdr.pctab, off, f.entry, f.End(), f.t.hdr.quantum)}
}

// Lines appends to buf[:0] f's PC ranges of constant (function, file,
// line), in address order, covering [Entry, End) without gaps, where the
// function is the innermost inlined call at those PCs or f itself.
func (f Function) Lines(buf []FunctionLine) ([]FunctionLine, error) {
	out := buf[:0]
	if f.t == nil {
		return out, ErrPCNotFound
	}
	if f.t.closed.Load() {
		return out, ErrClosed
	}
	tree, hasTree, err := f.inlineTree()
	if err != nil {
		return out, err
	}
	l := &f.t.layout
	files, lines := f.rangeIter(f.field(l.pcfile)), f.rangeIter(f.field(l.pcln))
	var inl rangeIter
	if hasTree {
		inl = f.rangeIter(tree.index)
	} else {
		inl = rangeIter{pcIter{lo: f.entry, hi: math.MaxUint64, val: -1}}
	}
	name := f.Name()
	end := f.End()
	for pc := f.entry; pc < end; {
		fno, line, ix := files.at(pc), lines.at(pc), inl.at(pc)
		next := min(files.hi, lines.hi, inl.hi, end)
		fl := FunctionLine{PCLo: pc, PCHi: next, Function: name, File: f.fileName(fno), Line: uint32(max(line, 0)), Call: -1}
		if ix >= 0 {
			c, ok := f.record(tree, ix)
			if !ok {
				return out[:0], f.formatError(errBadRecord)
			}
			fl.Function, fl.Call = f.callName(c), int(ix)
		}
		if n := len(out); n > 0 && out[n-1].sameSource(fl) {
			out[n-1].PCHi = next
		} else {
			out = append(out, fl)
		}
		pc = next
	}
	return out, nil
}

func (a FunctionLine) sameSource(b FunctionLine) bool {
	return a.Function == b.Function && a.File == b.File && a.Line == b.Line && a.Call == b.Call
}
