package lidia

import "github.com/gosym-dev/gosym/gosym"

// Reading a file whose ranges do not nest, such as Pyroscope's own (the
// package documentation, "Reading"): Pyroscope's backward walk over the
// file's tables.

// walk is Pyroscope's lookup: from the last range at or before addr,
// backward, every range that covers addr is a frame, with its own file and
// line, up to the first range of depth 0. It reads at most maxWalk ranges,
// as many as files written here need (the package documentation, "What
// the ranges mean"): a walk longer than that is a damaged file, which
// would otherwise make every lookup read all its ranges.
func (r *Reader) walk(dst []gosym.Location, addr uint64) ([]gosym.Location, error) {
	start := r.search(addr)
	for i := start; i >= 0; i-- {
		if start-i == maxWalk {
			return dst, errLongWalk
		}
		e := r.entry(i)
		va := r.vaAt(i)
		if va <= addr && addr-va < e.length && (r.o.inlines || e.depth == 0) {
			fn, ok1 := r.str(e.fn)
			file, ok2 := r.file(e.file)
			line, ok3 := r.line(&e, addr-va)
			if !(ok1 && ok2 && ok3) {
				return dst, corrupt("range %d has a reference out of range", i)
			}
			if !r.o.lines {
				line = 0
			}
			dst = append(dst, gosym.Location{Function: fn, File: file, Line: line})
		}
		if e.depth == 0 {
			break
		}
	}
	return dst, nil
}

// errLongWalk is the error of a walk past maxWalk ranges: made once, as a
// damaged file can fail every lookup.
var errLongWalk = corrupt("a walk back to a range of depth 0 reads more than %d ranges", maxWalk)

// search returns the index of the last range whose VA is at most addr, or
// -1.
func (r *Reader) search(addr uint64) int {
	lo, hi := r.vidx.bounds(addr) // the answer + 1 is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.vaAt(m) <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// line returns the line at offset rel from the VA of range e: that of the
// entry of its line table with the largest offset at most rel; 0 if none.
func (r *Reader) line(e *entry, rel uint64) (uint32, bool) {
	idx, count := e.lineIdx, e.lineCount
	if count == 0 {
		return 0, true
	}
	if idx > r.nl || count > r.nl-idx {
		return 0, false
	}
	j := r.after(idx, idx+count, rel)
	if j == idx {
		return 0, true
	}
	return r.lineNum(j - 1), true
}
