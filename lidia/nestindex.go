package lidia

import "math"

// nest builds the index of a file whose ranges nest (nest.go): sorted by
// (VA, depth), none empty, ranges at one depth disjoint, and each range at
// depth d ≥ 1 inside the last range at depth d-1 before it. It reports
// false, and Lookup walks, for a file whose ranges do not nest, and for
// one the index cannot hold: more than 4 GiB of addresses once gaps of
// gapMin bytes are left out, call lines above 32 bits, a strings table of
// 4 GiB, 2^31 line entries.
func (r *Reader) nest() bool {
	if uint64(r.n) >= noParent || uint64(len(r.strs)) >= math.MaxUint32-4 || r.nl >= noPrev {
		return false
	}
	// Sized for the file (whose tables hold at least 36 bytes per range),
	// written files having about 1.5 pieces per range and at most 2.
	x := indexer{
		r:     r,
		nodes: make([]node, 0, r.n),
		spans: make([]lineSpan, 0, r.n),
		pcs:   make([]piece, 0, r.n+r.n/2+1),
	}
	for i := range r.n {
		if !x.add(i) {
			return false
		}
	}
	x.close(0)
	x.lines()
	r.nodes, r.pcs, r.segs = x.nodes, x.pcs, x.segs
	r.pidx = newBucketIndex(len(x.pcs), 8, func(k int) uint64 { return uint64(x.pcs[k].start) })
	return true
}

// An indexer builds the index of a nested file from its ranges in order.
type indexer struct {
	r     *Reader
	nodes []node
	spans []lineSpan
	pcs   []piece
	segs  []segment
	stack []open // the last range at each depth of the current chain
}

// open is a range of the current chain.
type open struct {
	i       uint32
	va, end uint64 // VAs
	at      uint32 // the index's address of end
}

// lineSpan is a range's line table while the indexer cuts pieces: entries
// first to lim-1 (first is badLines if the table is not in the file), of
// which those before next are in effect before the range's last piece.
type lineSpan struct{ first, next, lim uint32 }

// add adds range i: its node, its line table, and the pieces it starts
// and those the ranges that ended before it end. It reports whether the
// ranges still nest and fit.
func (x *indexer) add(i int) bool {
	r := x.r
	va, e := r.vaAt(i), r.entry(i)
	end := va + e.length
	if e.length == 0 || end < va || e.depth > uint64(len(x.stack)) || e.callLine > math.MaxUint32 {
		return false
	}
	d := int(e.depth)
	if d < len(x.stack) && va < x.stack[d].end {
		return false // overlaps the previous range at its depth, or unsorted
	}
	parent := uint32(noParent)
	if d > 0 {
		p := x.stack[d-1]
		if va < p.va || end > p.end {
			return false
		}
		parent = p.i
	}
	x.close(d)
	n := len(x.segs)
	if d == 0 && (n == 0 || va-x.segs[n-1].end >= gapMin) {
		at := uint64(0)
		if n > 0 {
			s := x.segs[n-1]
			at = uint64(s.at) + s.end - s.start
		}
		x.segs = append(x.segs, segment{start: va, end: va, at: uint32(at)})
		n++
	}
	s := &x.segs[n-1]
	if end-s.start > math.MaxUint32-uint64(s.at) {
		return false // more than 4 GiB of addresses
	}
	s.end = max(s.end, end)
	at := s.at + uint32(va-s.start)
	x.nodes = append(x.nodes, node{
		va: at, parent: parent, callLine: uint32(e.callLine),
		fn: offset(e.fn), file: offset(e.file), callFile: offset(e.callFile),
		fnLen: r.strLen(e.fn), fileLen: r.strLen(e.file), callFileLen: r.strLen(e.callFile),
	})
	ls := lineSpan{first: badLines}
	if idx, count := e.lineIdx, e.lineCount; count == 0 {
		ls = lineSpan{}
	} else if idx <= r.nl && count <= r.nl-idx {
		ls = lineSpan{uint32(idx), uint32(idx), uint32(idx + count)}
	}
	x.spans = append(x.spans, ls)
	x.stack = append(x.stack, open{uint32(i), va, end, s.at + uint32(end-s.start)})
	x.cut(at, uint32(i))
	return true
}

// close ends the ranges of the chain from depth d on, deepest first: after
// each end, the innermost range is the one below it, if any.
func (x *indexer) close(d int) {
	for k := len(x.stack) - 1; k >= d; k-- {
		in := uint32(noParent)
		if k > 0 {
			in = x.stack[k-1].i
		}
		x.cut(x.stack[k].at, in)
	}
	x.stack = x.stack[:d]
}

// cut starts a piece of innermost range i at the index's address at, at or
// after the start of the last piece.
func (x *indexer) cut(at, i uint32) {
	n := len(x.pcs)
	switch {
	case n > 0 && x.pcs[n-1].start == at:
		x.pcs[n-1].inner = i
		if n > 1 && x.pcs[n-2].inner == i {
			x.pcs = x.pcs[:n-1]
		}
	case n > 0 && x.pcs[n-1].inner == i:
	default:
		x.pcs = append(x.pcs, piece{start: at, inner: i})
	}
}

// lines sets where each piece's line entries begin. A range's pieces come
// in address order, so the search for those of one starts where that of
// the range's last ended.
func (x *indexer) lines() {
	for k := range x.pcs {
		p := &x.pcs[k]
		if p.inner == noParent {
			continue
		}
		ls := &x.spans[p.inner]
		if ls.first == badLines {
			p.next = badLines
			continue
		}
		ls.next = uint32(x.r.afterFrom(uint64(ls.next), uint64(ls.lim), uint64(p.start-x.nodes[p.inner].va)))
		p.next, p.lim = ls.next, ls.lim
		if ls.next == ls.first {
			p.lim |= noPrev
		}
	}
}

// strLen returns the length of the string at offset off as a node holds
// it: lenSlow for a long string or a bad reference.
func (r *Reader) strLen(off uint64) uint16 {
	if s, ok := r.str(off); ok && len(s) < lenSlow {
		return uint16(len(s))
	}
	return lenSlow
}

// offset returns a string offset as a node holds it.
func offset(off uint64) uint32 {
	return uint32(min(off, math.MaxUint32))
}
