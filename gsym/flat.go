package gsym

import (
	"math"
	"math/bits"
	"slices"

	"github.com/gosym-dev/gosym/gosym"
)

// The file index: on the first lookup, the Reader decodes every
// FunctionInfo once (through its function index, index.go) into one
// table of the whole address space, cut into pieces over which the
// answer is the same: no function, one function's frames with the file
// and line of one line-table row, or "read the FunctionInfo" (a function
// whose data the function index refuses, or several functions at one
// address). A lookup then searches one bucket of the piece starts and
// follows the frame's chain of callers: no FunctionInfo, row or inline
// tree is read. The table is built once (sync.Once), read-only after,
// and its size and the work to build it are bounded by the file's size;
// where a bound is met the index stops there, and the addresses above it
// are looked up in the FunctionInfos, as they are in files whose address
// table is not sorted.

// A fileIndex answers lookups of the addresses base to base+span-1.
type fileIndex struct {
	span    uint64
	starts  []uint32 // where each piece starts, as an offset from base; sorted
	pieces  []piece
	buckets bucketIndex // of starts
	frames  []frame
	paths   []string // the files of the pieces; paths[0] = ""
}

// piece is what a lookup answers from a piece's start to the next's: the
// frame of the innermost function (its chain gives the callers), and the
// file (an index into paths) and line of that innermost frame.
type piece struct{ frame, file, line uint32 }

// Marks in piece.frame.
const (
	noFunc   = math.MaxUint32     // no function covers these addresses
	readInfo = math.MaxUint32 - 1 // the index cannot answer: read the FunctionInfo
)

// frame is a function (a FunctionInfo's, or one inlined), with the call
// site in its caller, the frame parent. The function of a FunctionInfo
// has no parent (noParent) and no call site.
type frame struct {
	name, call string
	callLine   uint32
	parent     uint32
}

const noParent = math.MaxUint32

// fileIndex returns the file index, building it on first use; nil if the
// file has none (an unsorted address table).
func (r *Reader) fileIndex() *fileIndex {
	r.fileOnce.Do(func() { r.fileIdx = r.buildFileIndex() })
	return r.fileIdx
}

// lookup appends the frames at offset off from base, below g.span, to
// buf. found is false at an address no function covers; ok is false
// where the FunctionInfo must be read instead.
func (g *fileIndex) lookup(buf []gosym.Location, off uint64) (out []gosym.Location, found, ok bool) {
	lo, hi := g.buckets.bounds(off)
	starts := g.starts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(starts[m]) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return buf, false, false
	}
	p := g.pieces[lo-1]
	switch p.frame {
	case noFunc:
		return buf, false, true
	case readInfo:
		return buf, false, false
	}
	f := &g.frames[p.frame]
	buf = append(buf, gosym.Location{Function: f.name, File: g.paths[p.file], Line: p.line})
	for f.parent != noParent {
		caller := &g.frames[f.parent]
		buf = append(buf, gosym.Location{Function: caller.name, File: f.call, Line: f.callLine})
		f = caller
	}
	return buf, true, true
}

// A fileIndexer builds a fileIndex.
type fileIndexer struct {
	r *Reader
	g *fileIndex
	// work is what the indexer may still do, in steps (a node of an
	// inline tree visited, a child or range scanned); paths, the bytes
	// of paths it may still keep.
	work, paths int64
	fileAt      []uint32     // fileAt[f]: the index in g.paths of file f, plus one; 0: none yet
	bounds      []uint32     // scratch: the offsets where a function's pieces may start
	ends        []uint32     // scratch: the ends of the ranges of its inline tree
	frameOf     []uint32     // scratch: the frame of each node of a tree
	cost        []int64      // scratch: the steps a lookup takes at each node
	f           funcIndex    // the function being indexed
	scratch     indexScratch // decodeIndex's
	// The pieces and frames of the index, and those of the function
	// being indexed, which it gets once the function is done.
	starts  chunkList[uint32]
	pieces  chunkList[piece]
	frames  chunkList[frame]
	fstarts []uint32
	fpieces []piece
	fframes []frame
}

// buildFileIndex builds the file index, or returns nil.
func (r *Reader) buildFileIndex() *fileIndex {
	addrs := r.addresses()
	if r.n == 0 || !slices.IsSorted(addrs) {
		return nil
	}
	x := &fileIndexer{
		r:      r,
		g:      &fileIndex{paths: []string{""}},
		work:   64*int64(len(r.data)) + 1<<20,
		paths:  2*int64(len(r.data)) + 1<<20,
		fileAt: make([]uint32, r.nfiles),
	}
	g := x.g
	for i := 0; i < r.n; {
		start := addrs[i]
		j := i + 1
		for j < r.n && addrs[j] == start {
			j++
		}
		// The functions at start answer up to end, where the next
		// address is; the last one up to its end.
		var end uint64
		if j < r.n {
			end = addrs[j]
		} else {
			fi, err := r.info(i)
			if j-i > 1 || err != nil {
				break // left to the FunctionInfos
			}
			end = start + uint64(r.o.Uint32(fi))
			if end <= start {
				break // size 0: it covers every address above
			}
		}
		if end-r.base > math.MaxUint32 {
			break
		}
		if !x.function(i, j, start, end) {
			break
		}
		x.commit()
		g.span = end - r.base
		i = j
	}
	if x.starts.n == 0 {
		return nil
	}
	g.starts, g.pieces, g.frames = x.starts.flat(), x.pieces.flat(), x.frames.flat()
	g.buckets = newBucketIndex(len(g.starts), func(k int) uint64 { return uint64(g.starts[k]) })
	return g
}

// add adds a piece at addr to those of the function being indexed,
// unless it answers as the last one does, and reports whether addr is
// within 4 GiB of base.
func (x *fileIndexer) add(addr uint64, p piece) bool {
	off := addr - x.r.base
	if off > math.MaxUint32 {
		return false
	}
	if n := len(x.fpieces); n > 0 && x.fpieces[n-1] == p || n == 0 && x.pieces.n > 0 && *x.pieces.last() == p {
		return true
	}
	x.fstarts = append(x.fstarts, uint32(off))
	x.fpieces = append(x.fpieces, p)
	return true
}

// addFrame adds a frame to those of the function being indexed, and
// returns its index.
func (x *fileIndexer) addFrame(f frame) uint32 {
	x.fframes = append(x.fframes, f)
	return uint32(x.frames.n + len(x.fframes) - 1)
}

// commit adds the pieces and frames of the function indexed to the
// index.
func (x *fileIndexer) commit() {
	for k, off := range x.fstarts {
		x.starts.add(off)
		x.pieces.add(x.fpieces[k])
	}
	for _, f := range x.fframes {
		x.frames.add(f)
	}
	x.fstarts, x.fpieces, x.fframes = x.fstarts[:0], x.fpieces[:0], x.fframes[:0]
}

// function adds the pieces of the FunctionInfos i to j-1, at start, up
// to end, where the next address is (end - base fits in 32 bits): those
// of the function, then, from its end on, none. Several functions at one
// address, or a function the function index refuses, are read in place.
// It reports false where the index must stop (a bound met).
func (x *fileIndexer) function(i, j int, start, end uint64) bool {
	r := x.r
	fi, err := r.info(i)
	if j-i > 1 || err != nil {
		return x.add(start, piece{frame: readInfo})
	}
	fend := end
	if size := uint64(r.o.Uint32(fi)); size != 0 && size < end-start {
		fend = start + size
	}
	if !r.decodeIndex(&x.f, fi, start, &x.scratch) {
		return x.add(start, piece{frame: readInfo})
	}
	if !x.addPieces(&x.f, start, fend) {
		return false
	}
	return fend == end || x.add(fend, piece{frame: noFunc})
}

// addPieces adds the pieces of the function f indexes, from start to end:
// one at each offset where its row or its innermost inlined call may
// change, answering as lookupIndexed does there.
func (x *fileIndexer) addPieces(f *funcIndex, start, end uint64) bool {
	root := x.addFrame(frame{name: f.name, parent: noParent})
	if !f.hasLines {
		return x.add(start, piece{frame: root})
	}
	size := end - start
	// The frame of each node: its own if it has a call site, else that
	// of the nearest node above that has one, or the function's. Nodes
	// come parents first. And the steps a lookup takes there.
	x.frameOf = slices.Grow(x.frameOf[:0], len(f.nodes))[:len(f.nodes)]
	x.cost = slices.Grow(x.cost[:0], len(f.nodes))[:len(f.nodes)]
	for k := range f.nodes {
		x.frameOf[k] = root
	}
	for k := range f.nodes {
		n := &f.nodes[k]
		if n.hasCall {
			x.frameOf[k] = x.addFrame(frame{name: n.name, call: n.call, callLine: n.callLine, parent: x.frameOf[k]})
		}
		x.cost[k] = 1 + int64(bits.Len(uint(len(n.sorted))))
		for _, kid := range n.kids {
			x.frameOf[kid.node] = x.frameOf[k]
			x.cost[k] += 1 + int64(len(f.nodes[kid.node].ranges))
		}
		for _, kid := range n.sorted {
			x.frameOf[kid.node] = x.frameOf[k]
		}
	}
	// The offsets where a piece may start: the rows' (sorted), and the
	// ends of the tree's ranges, sorted, merged in.
	ends := x.ends[:0]
	for k := range f.nodes {
		for _, rg := range f.nodes[k].ranges {
			for _, a := range [2]uint64{rg.lo, rg.hi} {
				if a > start && a-start < size {
					ends = append(ends, uint32(a-start))
				}
			}
		}
	}
	slices.Sort(ends)
	b := append(x.bounds[:0], 0)
	e := 0
	for _, rw := range f.rows {
		if uint64(rw.off) >= size {
			break
		}
		for ; e < len(ends) && ends[e] < rw.off; e++ {
			b = append(b, ends[e])
		}
		b = append(b, rw.off)
	}
	b = slices.Compact(append(b, ends[e:]...))
	x.bounds, x.ends = b, ends
	j := 0 // the rows at or below the offset
	for _, off := range b {
		for j < len(f.rows) && f.rows[j].off <= off {
			j++
		}
		p := piece{frame: readInfo}
		if j > 0 && f.rows[j-1].file != badFile {
			rw := f.rows[j-1]
			p.file = x.path(f, rw.file)
			if p.file == noFunc {
				return false
			}
			if p.file != 0 {
				p.line = rw.line
			}
			p.frame = root
			if k := x.innermost(f, start+uint64(off)); k >= 0 {
				p.frame = x.frameOf[k]
			}
			if x.work < 0 {
				return false
			}
		}
		if !x.add(start+uint64(off), p) {
			return false
		}
	}
	return true
}

// innermost returns the innermost node of f's tree that covers addr, as
// lookupIndexed descends to it, or -1 if the tree does not cover addr;
// it counts its steps against x.work.
func (x *fileIndexer) innermost(f *funcIndex, addr uint64) int32 {
	if len(f.nodes) == 0 {
		return -1
	}
	x.work -= int64(len(f.nodes[0].ranges))
	if !f.nodes[0].covers(addr) {
		return -1
	}
	k := int32(0)
	for {
		x.work -= x.cost[k]
		c := f.child(&f.nodes[k], addr)
		if c < 0 {
			return k
		}
		k = c
	}
}

// path returns the index in g.paths of the path of the row file k of f;
// noFunc when the paths kept would outgrow their bound.
func (x *fileIndexer) path(f *funcIndex, k uint32) uint32 {
	file := f.files[k]
	if at := x.fileAt[file]; at != 0 {
		return at - 1
	}
	p := f.paths[k]
	if p == "" {
		x.fileAt[file] = 1
		return 0
	}
	if x.paths -= int64(len(p)); x.paths < 0 {
		return noFunc
	}
	x.g.paths = append(x.g.paths, p)
	x.fileAt[file] = uint32(len(x.g.paths))
	return uint32(len(x.g.paths) - 1)
}

// A bucketIndex narrows a binary search over n sorted keys: the keys in
// [k<<shift, (k+1)<<shift) are those from at[k] to at[k+1]-1.
type bucketIndex struct {
	n     int
	at    []uint32
	shift uint
}

// newBucketIndex indexes the n sorted keys key(0), ..., key(n-1), with
// buckets of at least 256 and about two keys each, so that there are at
// most about n/2 of them plus one.
func newBucketIndex(n int, key func(int) uint64) bucketIndex {
	if n == 0 {
		return bucketIndex{}
	}
	span := key(n - 1)
	shift := uint(8)
	for shift < 64 && span>>shift >= 2*uint64(n) {
		shift++
	}
	at := make([]uint32, span>>shift+1)
	j := 0
	for k := range at {
		for j < n && key(j)>>shift < uint64(k) {
			j++
		}
		at[k] = uint32(j)
	}
	return bucketIndex{n, at, shift}
}

// bounds returns the keys a search for the last key at or below v reads:
// that key's index plus one is in [lo, hi].
func (b *bucketIndex) bounds(v uint64) (lo, hi int) {
	k := v >> b.shift
	if k >= uint64(len(b.at)) {
		return b.n, b.n
	}
	if k+1 < uint64(len(b.at)) {
		return int(b.at[k]), int(b.at[k+1])
	}
	return int(b.at[k]), b.n
}

// A chunkList is a list that grows by chunks, without copying, for the
// file index's tables, whose sizes are known only once they are built.
type chunkList[T any] struct {
	c [][]T // full chunks, and the last one, of length what it holds
	n int
}

const listChunk = 1 << 14

func (l *chunkList[T]) add(v T) {
	if len(l.c) == 0 || len(l.c[len(l.c)-1]) == listChunk {
		l.c = append(l.c, make([]T, 0, listChunk))
	}
	last := &l.c[len(l.c)-1]
	*last = append(*last, v)
	l.n++
}

// last returns the last element; the list is not empty.
func (l *chunkList[T]) last() *T {
	c := l.c[len(l.c)-1]
	return &c[len(c)-1]
}

// flat returns the elements in one slice.
func (l *chunkList[T]) flat() []T {
	out := make([]T, 0, l.n)
	for _, c := range l.c {
		out = append(out, c...)
	}
	return out
}
