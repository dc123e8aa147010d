package gosym

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The line cache makes repeated lookups in a function cheap. Resolving a
// PC from the tables themselves means decoding the function's pcfile, pcln
// and InlTreeIndex tables from its entry up to the PC, and, for each
// inlined frame, once more up to the call site: time linear in the size of
// the function. The second time ResolveLocations meets a function (the
// first is answered from the tables, so that a function looked up once
// costs no more than without a cache), it decodes the three tables once
// into a sorted array of ranges of constant (file, line, inline index);
// later lookups in that function, its inlined frames included, are binary
// searches (and a short count) in that array.
//
// A cached function takes 6 bytes per range (12 in the rare function
// whose offsets, lines or counts of files or inlined calls do not fit 16
// or 8 bits), 8 per name and file it uses, and about 80 more: about 0.6
// bytes per byte of machine code (4.2 MB for the go command of Go 1.26,
// whose text is 6.9 MB). The index of the cache, allocated by the first
// lookup, takes 8 bytes per function. The memory is bounded by the
// Table's line cache limit (SetLineCacheLimit; by default the smaller of
// DefaultLineCacheLimit and twice the size of the pclntab): once it is spent, functions not yet cached are decoded from
// the tables on each lookup, as without a cache. Answers are the same
// either way.

// DefaultLineCacheLimit bounds the line cache of a new Table, in bytes. A
// new Table's limit is the smaller of it and twice the size of its
// pclntab: a sound table needs less (the go command's cache holds 4.2 MB
// for a pclntab of 4.9 MB), and a damaged one, whose garbage line tables
// can decode into many ranges, then costs no more memory than a few times
// the binary.
const DefaultLineCacheLimit = 32 << 20

// funcLines is the decoded line tables of one function: n ranges of PCs
// of constant file, line and inline index, with the strings they use, in
// one array, tab. A string is two words, its offset and length in its
// strtab.
//
//	tab[0:2]              the function's name
//	tab[2:ranges]         the files the ranges use
//	tab[ranges:calls]     the ranges: their starts, as offsets from the
//	                      entry (each range ends where the next starts),
//	                      then their lines, then their file indices << k |
//	                      their inline indices + 1 (0: none); as uint16s
//	                      (k = 8) where all fit, else as uint32s (k = 16)
//	tab[calls:]           the names of the inlined calls the ranges use,
//	                      by inline index
//
// The first range starts at the entry; the last, where all three tables
// have ended, covers every PC after it. Everything a lookup reads is in
// tab, and what most lookups read (the function's name and file, the
// start of the offsets) comes first, so that a lookup in a function not
// used lately reads few cache lines.
type funcLines struct {
	tab              []uint32
	tree             inlineTree
	n, ranges, calls uint32
	startLine        uint32
	narrow           bool // the ranges are uint16s
	hasTree          bool
	wrapper          bool
}

// Two markers take the place of a funcLines in the cache: seenOnce for a
// function looked up once (it is decoded on the second lookup, so that
// functions met once cost no more than without a cache), and uncacheable
// for one whose tables do not fit a funcLines or whose inline tree is
// damaged (it is always resolved from the tables).
var seenOnce, uncacheable = new(funcLines), new(funcLines)

// linearRanges is how many ranges a lookup counts rather than searches.
const linearRanges = 16

// maxCachedRanges bounds the ranges of one function; a larger function
// (there is none in real binaries) is not cached.
const maxCachedRanges = 1 << 20

// maxCachedFiles bounds the distinct files of one function (real ones have
// a few dozen at most); a function with more is not cached. fileIndex
// searches them one by one, so the bound keeps decoding a function linear
// in its ranges whatever its pcfile table holds.
const maxCachedFiles = 1 << 8

// lineCache is a Table's cache of decoded functions. It is safe for
// concurrent use without locks: an entry, once stored, never changes.
type lineCache struct {
	once  sync.Once
	funcs []atomic.Pointer[funcLines] // by functab index
	used  atomic.Int64                // bytes held by cached funcLines
	limit atomic.Int64                // 1 + the bytes the cache may hold
	full  atomic.Bool                 // a function did not fit: cache no more
	wide  bool                        // for tests: store every function's ranges as uint32s
}

// max returns the bytes the cache may hold.
func (c *lineCache) max() int64 { return c.limit.Load() - 1 }

// SetLineCacheLimit bounds the memory, in bytes, that the Table spends on
// the decoded line tables of functions it has resolved PCs in (see
// DefaultLineCacheLimit). Functions cached already stay cached; 0 stops
// the caching of more. The answers of lookups do not depend on it, only
// their speed.
func (t *Table) SetLineCacheLimit(n int64) {
	t.lines.limit.Store(max(n, 0) + 1)
	t.lines.full.Store(false)
}

// defaultLineCacheLimit returns the line cache limit of a new Table whose
// pclntab holds n bytes.
func defaultLineCacheLimit(n int) int64 { return min(DefaultLineCacheLimit, 2*int64(n)) }

// get returns the decoded line tables of f, or nil if f is not cached
// (yet): the second call for f decodes and caches them. With now set, the
// first call does (ResolveLocations asks so for a deep inline walk).
func (c *lineCache) get(f Function, now bool) *funcLines {
	c.once.Do(func() { c.funcs = make([]atomic.Pointer[funcLines], f.t.hdr.nfunc) })
	if uint64(f.idx) >= uint64(len(c.funcs)) {
		return nil
	}
	slot := &c.funcs[f.idx]
	old := slot.Load()
	switch old {
	case nil:
		if !now {
			slot.CompareAndSwap(nil, seenOnce)
			return nil
		}
	case uncacheable:
		return nil
	case seenOnce:
	default:
		return old
	}
	if c.full.Load() {
		return nil
	}
	fl := f.decodeLines()
	if fl == nil {
		slot.Store(uncacheable)
		return nil
	}
	size := fl.size()
	if c.used.Add(size) > c.max() {
		c.used.Add(-size)
		c.full.Store(true)
		return nil
	}
	for !slot.CompareAndSwap(old, fl) {
		// Another goroutine marked f as seen (try again), or cached it
		// first, or found it uncacheable.
		if old = slot.Load(); old != nil && old != seenOnce {
			c.used.Add(-size)
			if old == uncacheable {
				return nil
			}
			return old
		}
	}
	return fl
}

// newFuncLines returns a funcLines whose tab has the given length. Where
// it is small, as in most functions, tab follows the funcLines in the same
// allocation: a lookup in a function not used lately then finds what it
// reads in adjacent cache lines, not in two objects anywhere in the heap.
//
// The arrays are sized so that the whole, 80 bytes of funcLines and the
// array, fills one of the allocator's size classes (112, 128, ..., 512
// bytes): no more than a sixth is spare.
func newFuncLines(words int) *funcLines {
	switch {
	case words <= 8:
		return newFuncLinesIn[[8]uint32](words)
	case words <= 12:
		return newFuncLinesIn[[12]uint32](words)
	case words <= 16:
		return newFuncLinesIn[[16]uint32](words)
	case words <= 20:
		return newFuncLinesIn[[20]uint32](words)
	case words <= 24:
		return newFuncLinesIn[[24]uint32](words)
	case words <= 32:
		return newFuncLinesIn[[32]uint32](words)
	case words <= 40:
		return newFuncLinesIn[[40]uint32](words)
	case words <= 52:
		return newFuncLinesIn[[52]uint32](words)
	case words <= 60:
		return newFuncLinesIn[[60]uint32](words)
	case words <= 76:
		return newFuncLinesIn[[76]uint32](words)
	case words <= 92:
		return newFuncLinesIn[[92]uint32](words)
	case words <= 108:
		return newFuncLinesIn[[108]uint32](words)
	}
	return &funcLines{tab: make([]uint32, words)}
}

// newFuncLinesIn is newFuncLines with tab in an array of type A, a
// [N]uint32 with N at least words.
func newFuncLinesIn[A any](words int) *funcLines {
	p := new(struct {
		fl  funcLines
		buf A
	})
	p.fl.tab = unsafe.Slice((*uint32)(unsafe.Pointer(&p.buf)), unsafe.Sizeof(p.buf)/4)[:words]
	return &p.fl
}

// size returns the bytes a funcLines holds.
func (fl *funcLines) size() int64 {
	return int64(unsafe.Sizeof(*fl)) + int64(cap(fl.tab))*4
}

// decodeLines decodes f's line tables, or returns nil if they do not fit
// a funcLines or the inline tree is damaged.
func (f Function) decodeLines() *funcLines {
	tree, hasTree, err := f.inlineTree()
	if err != nil {
		return nil
	}
	w := walkPool.Get().(*linesWalk)
	defer w.release()
	if !w.walk(f, tree, hasTree) {
		return nil
	}
	n, nFiles, nCalls := len(w.offs), len(w.fnos), int(w.maxInl)+1
	narrow := w.offs[n-1] <= math.MaxUint16 && w.maxLine <= math.MaxUint16 && nFiles <= 1<<8 && nCalls < 1<<8 && !f.t.lines.wide
	ranges, words := 2+2*nFiles, 3*n
	if narrow {
		words = (3*n + 1) / 2
	}
	fl := newFuncLines(ranges + words + 2*nCalls)
	fl.n, fl.ranges, fl.calls = uint32(n), uint32(ranges), uint32(ranges+words)
	fl.tree, fl.narrow, fl.hasTree = tree, narrow, hasTree
	fl.startLine, fl.wrapper = f.StartLine(), f.Wrapper()
	if narrow {
		r := fl.r16()
		for i, o := range w.offs {
			line, fi := w.vals[2*i], w.vals[2*i+1]
			r[i], r[n+i], r[2*n+i] = uint16(o), uint16(line), uint16(fi>>16<<8|fi&0xffff)
		}
	} else {
		r := fl.tab[ranges:fl.calls]
		for i, o := range w.offs {
			r[i], r[n+i], r[2*n+i] = o, w.vals[2*i], w.vals[2*i+1]
		}
	}
	ok := true
	put := func(i int, tab *strtab, s string) {
		off, l, refOK := tab.ref(s)
		fl.tab[i], fl.tab[i+1] = off, l
		ok = ok && refOK
	}
	put(0, f.t.names, f.Name())
	for i, fno := range w.fnos {
		put(2+2*i, f.t.files, f.fileName(fno))
	}
	for ix := range nCalls {
		if c, ok := f.record(tree, int32(ix)); ok {
			put(int(fl.calls)+2*ix, f.t.names, f.callName(c))
		}
	}
	if !ok {
		return nil
	}
	return fl
}

// linesWalk merges a function's pcfile, pcln and InlTreeIndex tables into
// ranges, in memory reused from one function to the next.
type linesWalk struct {
	offs    []uint32 // range starts, from the entry
	vals    []uint32 // two per range: line, file index << 16 | inline index + 1
	fnos    []int32  // distinct pcfile values (negative ones as -1)
	maxInl  int32    // largest inline index, -1 if none
	maxLine uint32   // largest line
}

var walkPool = sync.Pool{New: func() any { return new(linesWalk) }}

// release returns w to walkPool, unless it grew large.
func (w *linesWalk) release() {
	if cap(w.offs) <= 1<<16 && cap(w.fnos) <= 1<<10 {
		walkPool.Put(w)
	}
}

// walk walks f's tables. It reports false if they do not fit a
// funcLines.
func (w *linesWalk) walk(f Function, tree inlineTree, hasTree bool) bool {
	l := &f.t.layout
	files, lines := f.rangeIter(f.field(l.pcfile)), f.rangeIter(f.field(l.pcln))
	inl := rangeIter{pcIter{lo: f.entry, hi: math.MaxUint64, val: -1}}
	if hasTree {
		inl = f.rangeIter(tree.index)
	}
	w.offs, w.vals, w.fnos, w.maxInl, w.maxLine = w.offs[:0], w.vals[:0], w.fnos[:0], -1, 0
	var last [2]uint32
	for pc := f.entry; ; {
		fno, line, ix := max(files.at(pc), -1), lines.at(pc), max(inl.at(pc), -1)
		k := w.fileIndex(fno)
		if ix >= math.MaxUint16 || len(w.fnos) > maxCachedFiles {
			return false
		}
		v := [2]uint32{uint32(max(line, 0)), uint32(k)<<16 | uint32(ix+1)}
		if len(w.offs) == 0 || v != last {
			if len(w.offs) == maxCachedRanges {
				return false
			}
			w.offs = append(w.offs, uint32(pc-f.entry))
			w.vals = append(w.vals, v[0], v[1])
			w.maxInl, w.maxLine = max(w.maxInl, ix), max(w.maxLine, v[0])
			last = v
		}
		next := min(files.hi, lines.hi, inl.hi)
		if next == math.MaxUint64 {
			return true
		}
		if next-f.entry > math.MaxUint32 {
			return false
		}
		pc = next
	}
}

// fileIndex returns the index of a pcfile value in w.fnos, adding it if
// it is new.
func (w *linesWalk) fileIndex(fno int32) uint16 {
	for i, v := range w.fnos {
		if v == fno {
			return uint16(i)
		}
	}
	w.fnos = append(w.fnos, fno)
	return uint16(len(w.fnos) - 1)
}

// position returns the file, line and innermost inline index (-1: none)
// at pc, which lies in f, the function fl was decoded from.
func (fl *funcLines) position(f Function, pc uint64) inlineFrame {
	off := pc - f.entry
	n := int(fl.n)
	var line, file, inl uint32
	if fl.narrow {
		r := fl.r16()
		i := lastAtOrBelow(r[:n], off)
		fi := uint32(r[2*n+i])
		line, file, inl = uint32(r[n+i]), fi>>8, fi&0xff
	} else {
		r := fl.tab[fl.ranges:fl.calls]
		i := lastAtOrBelow(r[:n], off)
		fi := r[2*n+i]
		line, file, inl = r[n+i], fi>>16, fi&0xffff
	}
	ref := fl.tab[2+2*file:]
	return inlineFrame{f.t.files.str(ref[0], ref[1]), line, int32(inl) - 1}
}

// r16 returns the ranges of a narrow funcLines, as uint16s.
func (fl *funcLines) r16() []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(&fl.tab[fl.ranges])), 3*fl.n)
}

// lastAtOrBelow returns the index of the last of the increasing offs at
// or below off (offs[0] is 0). A binary search, whose steps the compiler
// turns into conditional moves, narrows offs down to a few, which are
// counted: the loads of the count do not wait for one another, as those
// of a search do, which matters when offs is not in the cache.
func lastAtOrBelow[T uint16 | uint32](offs []T, off uint64) int {
	o := min(off, math.MaxUint32)
	base, n := 0, len(offs)
	for n > linearRanges {
		half := n >> 1
		if uint64(offs[base+half]) <= o {
			base += half
		}
		n -= half
	}
	c := 0
	for _, x := range offs[base+1 : base+n] {
		c += int((uint64(x) - o - 1) >> 63) // 1 if x <= o
	}
	return base + c
}

// funcName returns the name of the function.
func (fl *funcLines) funcName(f Function) string {
	return f.t.names.str(fl.tab[0], fl.tab[1])
}

// callName returns the name of inlined call ix, if fl holds it.
func (fl *funcLines) callName(f Function, ix int32) (string, bool) {
	if i := uint64(fl.calls) + 2*uint64(ix); ix >= 0 && i+1 < uint64(len(fl.tab)) {
		return f.t.names.str(fl.tab[i], fl.tab[i+1]), true
	}
	return "", false
}
