package gsym

import (
	"math"
	"slices"

	"github.com/gosym-dev/gosym/gosym"
)

// A funcIndex is a FunctionInfo decoded for fast lookups, made on the
// first lookup in the function: its line rows, to search by address, and
// its inline tree as nodes, each with its children's ranges sorted. It
// answers exactly as the reading in place (lookupInfo) does, which stays
// the reference: a FunctionInfo that decodes with any error or oddity
// (rows out of order, a reference out of range) gets no index and is
// read in place at every lookup.
type funcIndex struct {
	size     uint32 // the function's size, as in the FunctionInfo
	name     string
	hasLines bool
	start    uint64
	rows     []fileLine // sorted by off; file: an index into paths, or badFile
	paths    []string   // the paths of the files of the rows
	files    []uint32   // their numbers in the file table
	nodes    []inode    // the inline tree, root first; nil: none
}

// fileLine is a line-table row: its address, as an offset from the
// function's start, its file and its line.
type fileLine struct{ off, file, line uint32 }

// inode is a node of an inline tree.
type inode struct {
	name     string
	call     string // the call site's file; valid if hasCall
	hasCall  bool   // the call file is not entry 0 (LLVM skips the node's frame)
	callLine uint32
	ranges   []pcRange
	// kids are the ranges of the children, each with its child, in the
	// order of the file, for a scan in that order where they overlap
	// (linear); empty once sorted is made.
	kids   []kidRange
	linear bool
	// sorted are kids, sorted, as offsets from the function's start,
	// when not linear.
	sorted []kidOff
}

type kidOff struct {
	lo, hi uint32
	node   int32
}

type kidRange struct {
	pcRange
	node int32
}

// noIndex marks a FunctionInfo read in place.
var noIndex = new(funcIndex)

// index returns the index of FunctionInfo i (data fi, function at
// start), making it on first use; noIndex if it has none.
func (r *Reader) index(i int, fi []byte, start uint64) *funcIndex {
	if x := r.idx[i].Load(); x != nil {
		return x
	}
	x := r.makeIndex(fi, start)
	if x == nil {
		x = noIndex
	}
	r.idx[i].Store(x)
	return x
}

// makeIndex decodes fi, or returns nil.
func (r *Reader) makeIndex(fi []byte, start uint64) *funcIndex {
	x := new(funcIndex)
	if !r.decodeIndex(x, fi, start, nil) {
		return nil
	}
	return x
}

// indexScratch is the memory decodeIndex reuses from one function to the
// next when the file index decodes every function in turn.
type indexScratch struct {
	local map[uint32]uint32
	kids  []kidRange
}

// decodeIndex decodes fi into x and reports whether it has an index. With
// s, it reuses the memory of x (the index of another function, no longer
// needed) and of s.
func (r *Reader) decodeIndex(x *funcIndex, fi []byte, start uint64, s *indexScratch) bool {
	name := r.o.Uint32(fi[4:])
	if name == 0 {
		return false
	}
	if s == nil {
		s = &indexScratch{}
	}
	*x = funcIndex{
		name: r.str(name), start: start, size: r.o.Uint32(fi),
		rows: x.rows[:0], paths: x.paths[:0], files: x.files[:0], nodes: x.nodes[:0],
	}
	var lineData, inlineData []byte
	p := fi[8:]
	for {
		if len(p) < 8 {
			return false
		}
		typ, n := r.o.Uint32(p), uint64(r.o.Uint32(p[4:]))
		p = p[8:]
		if n > uint64(len(p)) {
			return false
		}
		switch typ {
		case infoLines:
			lineData, x.hasLines = p[:n], true
		case infoInline:
			inlineData = p[:n]
		}
		p = p[n:]
		if typ == infoEnd {
			break
		}
	}
	if !x.hasLines {
		return true // the name only, whatever the rest holds
	}
	if !r.decodeRows(x, lineData, start) {
		return false
	}
	r.localFiles(x, s)
	if inlineData != nil && !r.decodeTree(x, inlineData, start, s) {
		return false
	}
	return true
}

// decodeRows decodes a line table whole into x.rows, and reports whether
// it is sound: it ends, and its rows' addresses never decrease.
func (r *Reader) decodeRows(x *funcIndex, p []byte, start uint64) bool {
	minD, k, err := sleb(p)
	if err != nil {
		return false
	}
	p = p[k:]
	maxD, k, err := sleb(p)
	if err != nil {
		return false
	}
	p = p[k:]
	first, k, err := uleb(p)
	if err != nil || maxD < minD {
		return false
	}
	p = p[k:]
	lineRange := uint64(maxD) - uint64(minD) + 1
	if lineRange == 0 {
		return false
	}
	cur := row{start, 1, uint32(first)}
	for {
		if len(p) == 0 {
			return false
		}
		op := p[0]
		p = p[1:]
		prev := cur.addr
		switch op {
		case opEnd:
			return true
		case opSetFile:
			v, k, err := uleb(p)
			if err != nil {
				return false
			}
			p, cur.file = p[k:], uint32(v)
			continue
		case opAdvanceLine:
			v, k, err := sleb(p)
			if err != nil {
				return false
			}
			p, cur.line = p[k:], cur.line+uint32(v)
			continue
		case opAdvancePC:
			v, k, err := uleb(p)
			if err != nil {
				return false
			}
			p, cur.addr = p[k:], cur.addr+v
		default:
			adj := uint64(op - opFirstSpec)
			cur.line += uint32(minD + int64(adj%lineRange))
			cur.addr += adj / lineRange
		}
		if cur.addr < prev || cur.addr-start > math.MaxUint32 {
			return false // wrapped around, or far beyond the function
		}
		x.rows = append(x.rows, fileLine{uint32(cur.addr - start), cur.file, cur.line})
	}
}

// badFile marks a row whose file is 0 or not in the file table: a lookup
// there is an error, which the reading in place reports.
const badFile = math.MaxUint32

// localFiles resolves the files of x's rows into x.paths, numbering
// them anew, so that a lookup reads the path next to the rows.
func (r *Reader) localFiles(x *funcIndex, s *indexScratch) {
	if s.local == nil {
		s.local = map[uint32]uint32{}
	}
	local := s.local
	clear(local)
	for i := range x.rows {
		f := x.rows[i].file
		k, ok := local[f]
		if !ok {
			k = badFile
			if f != 0 && uint64(f) < uint64(r.nfiles) {
				if p, err := r.path(f); err == nil {
					k = uint32(len(x.paths))
					x.paths = append(x.paths, p)
					x.files = append(x.files, f)
				}
			}
			local[f] = k
		}
		x.rows[i].file = k
	}
}

// decodeTree decodes an inline tree whole into x.nodes, and reports
// whether it is sound: it ends, it nests less than maxDepth deep, and
// every call file is in the file table.
func (r *Reader) decodeTree(x *funcIndex, p []byte, start uint64, s *indexScratch) bool {
	type open struct {
		node int32
		base uint64
	}
	var stack []open
	base := start
parse:
	for {
		nr, k, err := uleb(p)
		if err != nil {
			return false
		}
		p = p[k:]
		if nr == 0 {
			if len(stack) == 0 {
				return true // an empty root: no inline frames
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				break parse
			}
			base = stack[len(stack)-1].base
			continue
		}
		if nr > uint64(len(p))/2 {
			return false
		}
		var n inode
		if k := len(x.nodes); k < cap(x.nodes) {
			// The memory of the node that had this place before.
			old := x.nodes[:k+1][k]
			n.ranges, n.kids, n.sorted = old.ranges[:0], old.kids[:0], old.sorted[:0]
		}
		n.ranges = slices.Grow(n.ranges, int(nr))
		var first uint64
		for j := uint64(0); j < nr; j++ {
			off, k, err := uleb(p)
			if err != nil {
				return false
			}
			p = p[k:]
			size, k, err := uleb(p)
			if err != nil {
				return false
			}
			p = p[k:]
			lo := base + off
			if j == 0 {
				first = lo
			}
			if hi := lo + size; hi > lo {
				n.ranges = append(n.ranges, pcRange{lo, hi})
			}
		}
		if len(p) < 5 {
			return false
		}
		children := p[0] != 0
		n.name = r.str(r.o.Uint32(p[1:]))
		p = p[5:]
		callFile, k, err := uleb(p)
		if err != nil || callFile >= uint64(r.nfiles) {
			return false
		}
		p = p[k:]
		callLine, k, err := uleb(p)
		if err != nil {
			return false
		}
		p = p[k:]
		n.callLine = uint32(callLine)
		if r.o.Uint64(r.files[8*callFile:]) != 0 {
			n.hasCall = true
			if n.call, err = r.path(uint32(callFile)); err != nil {
				return false
			}
			if n.call == "" {
				n.callLine = 0 // no file, no line
			}
		}
		id := int32(len(x.nodes))
		x.nodes = append(x.nodes, n)
		if len(stack) > 0 {
			parent := &x.nodes[stack[len(stack)-1].node]
			for _, rg := range n.ranges {
				parent.kids = append(parent.kids, kidRange{rg, id})
			}
			if len(n.ranges) == 0 {
				// A child that covers nothing is never taken; but it
				// still has its place in the order of a linear scan.
				parent.kids = append(parent.kids, kidRange{pcRange{}, id})
			}
		}
		if len(stack) == 0 && !children {
			break
		}
		if children {
			if len(stack) >= maxDepth-1 {
				// Deeper nodes would make more frames than the
				// reading in place allows (maxDepth).
				return false
			}
			stack = append(stack, open{id, first})
			base = first
		}
	}
	// Sort each node's children's ranges; a node whose children overlap
	// is scanned in order instead.
	for i := range x.nodes {
		n := &x.nodes[i]
		s.kids = append(s.kids[:0], n.kids...)
		kids := s.kids
		slices.SortStableFunc(kids, func(a, b kidRange) int {
			switch {
			case a.lo < b.lo:
				return -1
			case a.lo > b.lo:
				return 1
			}
			return 0
		})
		sorted := true
		for j := 1; j < len(kids) && sorted; j++ {
			sorted = kids[j-1].hi <= kids[j].lo && kids[j].hi > kids[j].lo
		}
		if len(kids) > 0 && (kids[0].hi <= kids[0].lo || kids[0].lo < start || kids[len(kids)-1].hi-start > math.MaxUint32) {
			sorted = false
		}
		if !sorted {
			n.linear = true
			continue
		}
		n.sorted = slices.Grow(n.sorted[:0], len(kids))[:len(kids)]
		for j, k := range kids {
			n.sorted[j] = kidOff{uint32(k.lo - start), uint32(k.hi - start), k.node}
		}
		n.kids = n.kids[:0]
	}
	return true
}

// covers reports whether one of n's ranges holds addr.
func (n *inode) covers(addr uint64) bool {
	for _, rg := range n.ranges {
		if addr >= rg.lo && addr < rg.hi {
			return true
		}
	}
	return false
}

// child returns the child of n that covers addr, or -1.
func (x *funcIndex) child(n *inode, addr uint64) int32 {
	if n.linear {
		for _, k := range n.kids {
			if k.hi > k.lo && x.nodes[k.node].covers(addr) {
				return k.node
			}
		}
		return -1
	}
	// The last range that starts at or below addr.
	if addr-x.start > math.MaxUint32 {
		return -1
	}
	off := uint32(addr - x.start)
	kids := n.sorted
	lo, hi := 0, len(kids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if kids[m].lo <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 && off < kids[lo-1].hi {
		return kids[lo-1].node
	}
	return -1
}

// lookup is lookupInfo with the index; ok is false where the index cannot
// answer (the answer is an error), for lookupInfo to say why.
func (r *Reader) lookupIndexed(x *funcIndex, buf []gosym.Location, addr uint64) ([]gosym.Location, bool) {
	if !x.hasLines {
		return append(buf, gosym.Location{Function: x.name}), true
	}
	// The last row at or below addr.
	if addr-x.start > math.MaxUint32 {
		return buf, false
	}
	off := uint32(addr - x.start)
	rows := x.rows
	j, hi := 0, len(rows)
	for j < hi {
		m := int(uint(j+hi) >> 1)
		if rows[m].off <= off {
			j = m + 1
		} else {
			hi = m
		}
	}
	if j == 0 {
		return buf, false
	}
	rw := x.rows[j-1]
	if rw.file == badFile {
		return buf, false
	}
	path := x.paths[rw.file]
	caller := x.name
	if len(x.nodes) > 0 && x.nodes[0].covers(addr) {
		for k := int32(0); k >= 0; k = x.child(&x.nodes[k], addr) {
			n := &x.nodes[k]
			if n.hasCall {
				buf = append(buf, gosym.Location{Function: caller, File: n.call, Line: n.callLine})
				caller = n.name
			}
		}
	}
	line := rw.line
	if path == "" {
		line = 0 // no file, no line
	}
	buf = append(buf, gosym.Location{Function: caller, File: path, Line: line})
	for i, k := 0, len(buf)-1; i < k; i, k = i+1, k-1 {
		buf[i], buf[k] = buf[k], buf[i]
	}
	return buf, true
}
