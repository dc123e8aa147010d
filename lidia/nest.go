package lidia

import (
	"math"
	"unsafe"
)

// The index of a file whose ranges nest (the package documentation,
// "Reading"): every range as a node that holds all Lookup reads of it, and
// the address space cut into pieces of one innermost range. Lookup reads
// a piece, the node of its innermost range, a few line entries, and one
// node for each enclosing range; not the file's VA and range tables.

// noParent marks a range without an enclosing range (node.parent), and a
// piece without a range (piece.inner).
const noParent = math.MaxUint32

// node is what the index keeps of a range: 32 bytes, so that a frame
// costs one cache line.
type node struct {
	va                 uint32 // VA - Reader.base
	parent             uint32 // the range at depth-1 that holds it; noParent at depth 0
	fn, file, callFile uint32 // string offsets (math.MaxUint32: a bad reference)
	// The call line; for a range of depth 0, where the alignment padding
	// at its end starts, as an offset from its VA plus one (0: none).
	callLine                    uint32
	fnLen, fileLen, callFileLen uint16 // string lengths; lenSlow: read the table
}

// piece is a run of addresses whose innermost range is the same: from
// start to the start of the next piece.
type piece struct {
	start uint32 // VA - Reader.base
	inner uint32 // the innermost range; noParent: none
	// The innermost range's line entries that may apply in the piece are
	// those from next-1 (in effect at start, unless lim has noPrev) to
	// lim-1. next is badLines if the range's line table is not in the
	// file.
	next, lim uint32
}

const (
	noPrev   = 1 << 31        // in piece.lim: no line entry is in effect at the piece's start
	badLines = math.MaxUint32 // in piece.next: the line table is out of range
)

// lenSlow marks, in a node, a string that Lookup reads from the table: one
// of 65535 bytes or more, or a bad reference.
const lenSlow = math.MaxUint16

// nest indexes the ranges if they nest: sorted by (VA, depth), none empty,
// ranges at one depth disjoint, and each range at depth d ≥ 1 inside the
// last range at depth d-1 before it; and if the index can hold them (VAs
// spanning less than 4 GiB, call lines, string offsets and line indexes of
// 32 bits). Else it reports false, and Lookup walks.
func (r *Reader) nest() bool {
	if uint64(r.n) >= noParent || uint64(len(r.strs)) >= math.MaxUint32-4 || r.nl >= noPrev {
		return false
	}
	if r.n > 0 {
		r.base = r.vaAt(0)
	}
	nodes := make([]node, r.n)
	spans := make([]span, r.n)
	type open struct {
		i       uint32
		va, end uint64
	}
	var stack []open // the last range at each depth of the current chain
	for i := range r.n {
		va, e := r.vaAt(i), r.entry(i)
		end := va + e.length
		if e.length == 0 || end < va || va < r.base || end-r.base > math.MaxUint32 ||
			e.depth > uint64(len(stack)) || e.callLine > math.MaxUint32 {
			return false
		}
		d := int(e.depth)
		if d < len(stack) && va < stack[d].end {
			return false // overlaps the previous range at its depth, or unsorted
		}
		parent := uint32(noParent)
		if d > 0 {
			p := stack[d-1]
			if va < p.va || end > p.end {
				return false
			}
			parent = p.i
		}
		nodes[i] = node{
			va: uint32(va - r.base), parent: parent, callLine: uint32(e.callLine),
			fn: offset(e.fn), file: offset(e.file), callFile: offset(e.callFile),
			fnLen: r.strLen(e.fn), fileLen: r.strLen(e.file), callFileLen: r.strLen(e.callFile),
		}
		spans[i] = span{end: uint32(end - r.base), first: badLines}
		if idx, count := e.lineIdx, e.lineCount; idx <= r.nl && count <= r.nl-idx {
			spans[i].first, spans[i].next, spans[i].lim = uint32(idx), uint32(idx), uint32(idx+count)
		}
		stack = append(stack[:d], open{uint32(i), va, end})
	}
	r.nodes = nodes
	r.pieces(spans)
	return true
}

// span is what pieces needs of a range: its end (VA - base), and its line
// entries (first to lim-1, or first is badLines), from next on not yet
// passed by its pieces.
type span struct{ end, first, next, lim uint32 }

// strLen returns the length of the string at offset off as a node holds
// it: lenSlow for a long string or a bad reference.
func (r *Reader) strLen(off uint64) uint16 {
	if s, ok := r.str(off); ok && len(s) < lenSlow {
		return uint16(len(s))
	}
	return lenSlow
}

// strOf returns the string at offset off of length n, from a node.
func (r *Reader) strOf(off uint32, n uint16) (string, bool) {
	switch n {
	case 0:
		return "", true
	case lenSlow:
		return r.str(uint64(off))
	}
	return unsafe.String(&r.strs[off+4], n), true
}

// fileOf is strOf, or "" when files are turned off.
func (r *Reader) fileOf(off uint32, n uint16) (string, bool) {
	if !r.o.files {
		return "", true
	}
	return r.strOf(off, n)
}

// offset returns a string offset as a node holds it.
func offset(off uint64) uint32 {
	return uint32(min(off, math.MaxUint32))
}

// pieces cuts the address space into pieces of one innermost range and
// indexes them.
func (r *Reader) pieces(spans []span) {
	// Written files have about 1.5 pieces per range, at most 2.
	pcs := make([]piece, 0, r.n+r.n/2+16)
	add := func(at uint64, i uint32) {
		n := len(pcs)
		switch {
		case n > 0 && uint64(pcs[n-1].start) == at:
			pcs[n-1].inner = i
			if n > 1 && pcs[n-2].inner == i {
				pcs = pcs[:n-1]
			}
		case n > 0 && pcs[n-1].inner == i:
		default:
			pcs = append(pcs, piece{start: uint32(at), inner: i})
		}
	}
	type open struct {
		i   uint32
		end uint64
	}
	var stack []open
	closeTo := func(at uint64) {
		// Close the ranges that end at or before at; after each end, the
		// innermost range is the one below it, if any.
		for len(stack) > 0 && stack[len(stack)-1].end <= at {
			end := stack[len(stack)-1].end
			stack = stack[:len(stack)-1]
			in := uint32(noParent)
			if len(stack) > 0 {
				in = stack[len(stack)-1].i
			}
			add(end, in)
		}
	}
	for i := range r.nodes {
		nd := &r.nodes[i]
		va := uint64(nd.va)
		closeTo(va)
		stack = append(stack, open{uint32(i), uint64(spans[i].end)})
		add(va, uint32(i))
	}
	closeTo(math.MaxUint64)
	for k := range pcs {
		if p := &pcs[k]; p.inner != noParent {
			p.next, p.lim = r.linesAt(&spans[p.inner], uint64(p.start-r.nodes[p.inner].va))
		}
	}
	r.pcs = pcs
	r.pidx = newBucketIndex(len(pcs), 8, func(k int) uint64 { return uint64(pcs[k].start) })
}

// linesAt returns piece.next and piece.lim for a piece of the range of s
// that starts at offset rel from its VA. A range's pieces come in address
// order, so the search for the line entries of one starts where that of
// the previous ended.
func (r *Reader) linesAt(s *span, rel uint64) (next, lim uint32) {
	if s.first == badLines {
		return badLines, 0
	}
	s.next = uint32(r.afterFrom(uint64(s.next), uint64(s.lim), rel))
	next, lim = s.next, s.lim
	if next == s.first {
		lim |= noPrev
	}
	return next, lim
}

// lookupNest is Lookup for a file whose ranges nest.
func (r *Reader) lookupNest(dst []Frame, addr uint64) ([]Frame, error) {
	k := r.piece(addr)
	if k < 0 || r.pcs[k].inner == noParent {
		return dst, nil
	}
	p := r.pcs[k]
	nd := &r.nodes[p.inner]
	rel := addr - r.base - uint64(nd.va)
	if !r.o.inlines && nd.parent != noParent {
		// Only the physical frame, with its file and line at the call
		// site in the range above it.
		inner := nd
		for nd.parent != noParent {
			inner, nd = nd, &r.nodes[nd.parent]
		}
		return r.outerFrame(dst, nd, inner)
	}
	if p.next == badLines {
		return dst, corrupt("range %d has its line table out of range", p.inner)
	}
	fn, ok1 := r.strOf(nd.fn, nd.fnLen)
	file, ok2 := r.fileOf(nd.file, nd.fileLen)
	if !(ok1 && ok2) {
		return dst, corrupt("range %d has a string out of range", p.inner)
	}
	var line uint32
	if nd.parent == noParent && nd.callLine != 0 && rel >= uint64(nd.callLine)-1 {
		file = "" // alignment padding: no position
	} else if r.o.lines {
		line = r.lineIn(&p, rel)
	}
	dst = append(dst, Frame{fn, file, line})
	for nd.parent != noParent {
		outer := &r.nodes[nd.parent]
		var err error
		if dst, err = r.outerFrame(dst, outer, nd); err != nil {
			return dst, err
		}
		nd = outer
	}
	return dst, nil
}

// outerFrame appends the frame of range outer at the call site recorded in
// range inner, the range one deeper.
func (r *Reader) outerFrame(dst []Frame, outer, inner *node) ([]Frame, error) {
	fn, ok1 := r.strOf(outer.fn, outer.fnLen)
	file, ok2 := r.fileOf(inner.callFile, inner.callFileLen)
	if !(ok1 && ok2) {
		return dst, corrupt("range at %#x has a string out of range", r.base+uint64(outer.va))
	}
	line := inner.callLine
	if !r.o.lines {
		line = 0
	}
	return append(dst, Frame{fn, file, line}), nil
}

// lineIn returns the line at offset rel from the VA of piece p's innermost
// range, for an address in p.
func (r *Reader) lineIn(p *piece, rel uint64) uint32 {
	j := r.afterFrom(uint64(p.next), uint64(p.lim&^noPrev), rel)
	if j == uint64(p.next) && p.lim&noPrev != 0 {
		return 0
	}
	return r.lineNum(j - 1)
}

// piece returns the index of the piece that holds addr, or -1.
func (r *Reader) piece(addr uint64) int {
	if addr < r.base {
		return -1
	}
	a := uint32(min(addr-r.base, math.MaxUint32))
	lo, hi := r.pidx.bounds(len(r.pcs), uint64(a)) // the answer + 1 is in [lo, hi]
	pcs := r.pcs
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pcs[m].start <= a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}
