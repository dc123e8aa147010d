package lidia

import (
	"math"
	"unsafe"

	"github.com/gosym-dev/gosym/gosym"
)

// Lookup in a file whose ranges nest (the package documentation,
// "Reading"), through the index nestindex.go builds: every range as a node
// that holds all Lookup reads of it, and the address space cut into pieces
// of one innermost range. Lookup reads a piece, the node of its innermost
// range, a few line entries, and one node for each enclosing range; not
// the file's VA and range tables.

// noParent marks a range without an enclosing range (node.parent), and a
// piece without a range (piece.inner).
const noParent = math.MaxUint32

// node is what the index keeps of a range: 32 bytes, so that a frame
// costs one cache line.
type node struct {
	va                 uint32 // the index's address of the range's VA (see segment)
	parent             uint32 // the range at depth-1 that holds it; noParent at depth 0
	fn, file, callFile uint32 // string offsets (math.MaxUint32 stands for any above)
	// The call line; for a range of depth 0, where the alignment padding
	// at its end starts, as an offset from its VA plus one (0: none).
	callLine                    uint32
	fnLen, fileLen, callFileLen uint16 // string lengths; lenSlow: read the table
}

// lenSlow marks, in a node, a string that Lookup reads from the table: one
// of 65535 bytes or more, or a bad reference.
const lenSlow = math.MaxUint16

// piece is a run of addresses whose innermost range is the same: from
// start to the start of the next piece.
type piece struct {
	start uint32 // the index's address (see segment)
	inner uint32 // the innermost range; noParent: none
	// The line entries of the innermost range from next-1 (in effect at
	// start, unless lim has noPrev) to the end of its line table, lim-1.
	// next is badLines if the range's line table is not in the file.
	next, lim uint32
}

const (
	noPrev   = 1 << 31        // in piece.lim: no line entry is in effect at the piece's start
	badLines = math.MaxUint32 // in piece.next: the line table is out of range
)

// A segment is a run of VAs that the index holds, from start to end, at
// the index's addresses from at on. Runs of gapMin bytes or more that no
// range covers separate segments and are left out, so that the index's
// addresses fit in 32 bits however far apart a binary's sections lie.
type segment struct {
	start, end uint64
	at         uint32
}

const gapMin = 16 << 20

// lookupNest is Lookup for a file whose ranges nest.
func (r *Reader) lookupNest(dst []gosym.Location, addr uint64) ([]gosym.Location, error) {
	k, a := r.piece(addr)
	if k < 0 || r.pcs[k].inner == noParent {
		return dst, nil
	}
	p := r.pcs[k]
	nd := &r.nodes[p.inner]
	rel := uint64(a - nd.va)
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
	dst = append(dst, gosym.Location{Function: fn, File: file, Line: line})
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
func (r *Reader) outerFrame(dst []gosym.Location, outer, inner *node) ([]gosym.Location, error) {
	fn, ok1 := r.strOf(outer.fn, outer.fnLen)
	file, ok2 := r.fileOf(inner.callFile, inner.callFileLen)
	if !(ok1 && ok2) {
		return dst, corrupt("range %d has a string out of range", inner.parent)
	}
	line := inner.callLine
	if !r.o.lines {
		line = 0
	}
	return append(dst, gosym.Location{Function: fn, File: file, Line: line}), nil
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

// piece returns the index of the piece that holds addr, or -1, and the
// index's address of addr.
func (r *Reader) piece(addr uint64) (int, uint32) {
	segs := r.segs
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].start <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 || addr >= segs[lo-1].end {
		return -1, 0 // before the first range, in a gap, or after the last
	}
	s := &segs[lo-1]
	a := s.at + uint32(addr-s.start)
	lo, hi = r.pidx.bounds(uint64(a)) // the answer + 1 is in [lo, hi]
	pcs := r.pcs
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pcs[m].start <= a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1, a
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
