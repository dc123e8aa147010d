package gosym

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// lineIndex is the index behind LinePCs. It is built in two steps, each on
// first use, so that the first query costs one pass over every function's
// pcfile table (the pass debug/gosym's LineToPC makes for every query)
// and the decoding of the functions that hold the file asked for:
//
//   - The first LinePCs names every file of the file table (Go 1.2–1.15)
//     or the cutab (1.16+), and walks every function's pcfile table to
//     list, for each file, the functions whose code it holds (the
//     postings).
//   - The first query of a file decodes the line tables of its functions
//     and keeps, for every copy of every line of the file (a physical
//     function's own code, or one inlined call in it), its lowest PC,
//     sorted by line and PC. Later queries of the file are binary
//     searches.
//
// The memory is bounded by the size of the table whatever its bytes say,
// even when many functions share one line table (the linker shares
// identical tables; a damaged table can make every function use one that
// changes line at every byte). The postings are dropped if they outgrow
// maxPostings: then the first query of a file walks every function. The
// lines of the files share a limit of lineIndexLimit bytes: a file whose
// lines do not fit is not kept, and each of its queries decodes its
// functions again (keeping only the copies of the line asked for).
// Answers are the same either way.
//
// The time is bounded by the size of the table too: the first LinePCs,
// and each query, decode at most walkLimit ranges (pc-value pairs), and
// fail with errLineWork beyond. A sound table's functions have line tables
// of their own, or share small ones: all of them together decode to fewer
// ranges than the pctab has bytes. Many long functions sharing one long
// table decode to more, up to functions × table length.
type lineIndex struct {
	once   sync.Once
	err    error
	files  []string            // file names by id
	byBase map[string][]uint32 // base name → ids of the files that have it
	// slots maps a function's pcfile value to a file id: slot cu+value of
	// the cutab (Go 1.16+), or slot value of the file table (1.2–1.15).
	// Its entries are id+1, or noFile for a slot that names none.
	slots []uint32
	// The postings: the functab indices of the functions that hold file
	// id are funcs[start[id]:start[id+1]], in functab order. start is nil
	// if there were too many: every function may hold every file.
	start, funcs []uint32
	lines        []atomic.Pointer[fileLines] // by file id, once queried
	used         atomic.Int64                // bytes held by lines
	limit        int64                       // bytes lines may hold
	walkLimit    int64                       // ranges a step may decode; set before the first LinePCs by tests
}

// errLineWork is the message of the error of a step of the line index
// that would decode more than walkLimit ranges.
const errLineWork = "line tables decode to more ranges than the table's size allows (one table shared by many long functions)"

// lineWalkLimit returns the ranges a step of the line index may decode in
// a table whose pclntab holds n bytes. The first LinePCs on the go command
// of Go 1.26 decodes 102,814 (its pclntab has 4.9 MB); the first queries
// of all of its files together, 1,188,705; the limit is 159 million.
func lineWalkLimit(n int) int64 { return 32*int64(n) + 1<<20 }

// errWalk is the error of a step that reached walkLimit.
func (x *lineIndex) errWalk() error { return &FormatError{Off: -1, Msg: errLineWork} }

// noFile marks a slot that names no file.
const noFile = math.MaxUint32

// fileLines is the lines of one file: every copy of every line, sorted by
// line and then PC; or, if they did not fit the index's limit, only scan
// set (queries decode the file's functions); or the error that decoding
// them met.
type fileLines struct {
	copies []lineCopy
	scan   bool
	err    error
}

// lineCopy is one copy of a line: its lowest PC, as an offset from the
// entry of function fn (a functab index), and the inlined call (as
// FunctionLine.Call; -1: fn's own code).
type lineCopy struct {
	line uint32
	fn   uint32
	call int32
	off  uint32
}

// lineCopySize is the memory of one lineCopy.
const lineCopySize = int64(unsafe.Sizeof(lineCopy{}))

// lineIndexLimit returns the bytes the lines of a table whose pclntab
// holds n bytes may take: twice its size, at least 1 MB. A sound table
// needs less (the go command of Go 1.26: 3.7 MB for a pclntab of 4.9 MB).
func lineIndexLimit(n int) int64 { return max(2*int64(n), 1<<20) }

// maxPostings bounds the postings of a table with nfunc functions and a
// pctab of n bytes. Each posting but one per function needs a pair of the
// function's pcfile table: two bytes at least, unless the linker shares
// the table with other functions, which it does for the small tables of
// small functions. (The go command of Go 1.26 has 28,030 postings for
// 14,864 functions and a pctab of 1.8 MB.)
func maxPostings(nfunc uint64, n int) int { return int(min(2*nfunc+uint64(n)/2, math.MaxInt32)) }

// lineIndex returns the index, building its first step on first use.
func (t *Table) lineIndex() (*lineIndex, error) {
	x := &t.byLine
	x.once.Do(func() { x.err = t.buildLineIndex(x) })
	return x, x.err
}

// buildLineIndex names the files and makes the postings.
func (t *Table) buildLineIndex(x *lineIndex) error {
	x.limit = lineIndexLimit(len(t.data))
	if x.walkLimit == 0 {
		x.walkLimit = lineWalkLimit(len(t.data))
	}
	budget := x.walkLimit
	x.nameSlots(t)
	x.lines = make([]atomic.Pointer[fileLines], len(x.files))
	limit := maxPostings(t.hdr.nfunc, len(t.hdr.pctab))
	postings := make([]uint64, 0, min(limit, 2*int(t.hdr.nfunc))) // id<<32 | functab index, by function
	stamp := make([]uint32, len(x.files))                         // by id: 1 + the last function posted under it
	pctab, quantum := t.hdr.pctab, t.hdr.quantum
	funcs, rd, l := t.hdr.funcs, t.hdr.rd, &t.layout
	// Every function's record is read as is: checking it is left to the
	// queries that decode the function (funcAt), as the postings only
	// say which functions to decode.
	for i := range t.hdr.nfunc {
		recOff, ok := t.funcOffAt(i)
		if !ok || recOff > uint64(len(funcs)) || uint64(len(funcs))-recOff < uint64(l.fixedSize) {
			continue
		}
		rec := funcs[recOff:]
		off := rd.u32(rec[l.pcfile:])
		if off == 0 || uint64(off) >= uint64(len(pctab)) {
			continue
		}
		p := pctab[off:]
		cu := uint32(0)
		if l.cuOffset >= 0 {
			cu = rd.u32(rec[l.cuOffset:])
		}
		entry, end, fn := t.entryAt(i), t.entryAt(i+1), uint32(i)
		val := int32(-1)
		for pc := entry; pc < end; {
			if budget--; budget < 0 {
				return x.errWalk()
			}
			uv, n := uvarint(p)
			if n == 0 || (uv == 0 && pc != entry) {
				break
			}
			pcd, m := uvarint(p[n:])
			if m == 0 {
				break
			}
			p = p[n+m:]
			val += int32(-(uv & 1) ^ (uv >> 1))
			hi := pc + uint64(pcd*quantum)
			if hi <= pc {
				pc = hi
				continue
			}
			pc = hi
			id := x.fileID(cu, val)
			if id == noFile || stamp[id] == fn+1 {
				continue
			}
			stamp[id] = fn + 1
			if len(postings) == limit {
				// Too many: keep none, and decode every function.
				x.start, x.funcs = nil, nil
				return nil
			}
			postings = append(postings, uint64(id)<<32|uint64(fn))
		}
	}
	x.start, x.funcs = csr(postings, len(x.files))
	return nil
}

// nameSlots names the files of every slot.
func (x *lineIndex) nameSlots(t *Table) {
	hint := min(t.hdr.nfiles, uint64(len(t.hdr.filetab)/2)) // Go 1.16+: the files, each 2 bytes at least
	ids := make(map[string]uint32, hint)
	x.byBase = make(map[string][]uint32, hint)
	name := func(name string) uint32 {
		if name == "" {
			return noFile
		}
		id, ok := ids[name]
		if !ok {
			id = uint32(len(x.files))
			ids[name] = id
			x.files = append(x.files, name)
			base := name[strings.LastIndexByte(name, '/')+1:]
			x.byBase[base] = append(x.byBase[base], id)
		}
		return id + 1
	}
	if t.hdr.magic == magic12 {
		n, _ := t.hdr.rd.u32At(t.hdr.filetab, 0)
		x.slots = make([]uint32, min(uint64(n), uint64(max(len(t.hdr.filetab)-4, 0)/4))+1)
		x.slots[0] = noFile
		for s := 1; s < len(x.slots); s++ {
			x.slots[s] = name(t.globalFile(int32(s)))
		}
		return
	}
	x.slots = make([]uint32, len(t.hdr.cutab)/4)
	byOff := make([]uint32, len(t.hdr.filetab)) // filetab offset → slot entry, once named
	for s := range x.slots {
		off := t.hdr.rd.u32(t.hdr.cutab[4*s:])
		switch {
		case off == math.MaxUint32:
			x.slots[s] = noFile
		case uint64(off) >= uint64(len(byOff)):
			x.slots[s] = name(t.files.at(uint64(off)))
		default:
			if byOff[off] == 0 {
				byOff[off] = name(t.files.at(uint64(off)))
			}
			x.slots[s] = byOff[off]
		}
	}
}

// csr sorts pairs key<<32 | value, keys below n, by key (a stable
// counting sort), and returns the values and where each key's start.
func csr(pairs []uint64, n int) (start, values []uint32) {
	start = make([]uint32, n+1)
	for _, p := range pairs {
		start[p>>32+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	values = make([]uint32, len(pairs))
	next := slices.Clone(start[:n])
	for _, p := range pairs {
		k := p >> 32
		values[next[k]] = uint32(p)
		next[k]++
	}
	return start, values
}

// cu returns f's offset in the cutab (Go 1.16+), 0 before.
func (x *lineIndex) cu(f Function) uint32 {
	if f.t.layout.cuOffset < 0 {
		return 0
	}
	return f.field(f.t.layout.cuOffset)
}

// slot returns the slot of pcfile value fno in a function whose cutab
// offset is cu, if there is one.
func (x *lineIndex) slot(cu uint32, fno int32) (uint32, bool) {
	if fno < 0 || cu == math.MaxUint32 {
		return 0, false
	}
	s := uint64(cu) + uint64(fno)
	return uint32(s), s < uint64(len(x.slots))
}

// fileID returns the id of the file of pcfile value fno, or noFile.
func (x *lineIndex) fileID(cu uint32, fno int32) uint32 {
	if s, ok := x.slot(cu, fno); ok && x.slots[s] != noFile {
		return x.slots[s] - 1
	}
	return noFile
}

// fileIDs returns the ids of the files that name selects: the file of
// that name, else every file whose name ends in "/"+name (exact false:
// the caller checks hasPathSuffix).
func (x *lineIndex) fileIDs(name string) (ids []uint32, exact bool) {
	ids = x.byBase[name[strings.LastIndexByte(name, '/')+1:]]
	for k, id := range ids {
		if x.files[id] == name {
			return ids[k : k+1], true
		}
	}
	return ids, false
}

// postings calls fn for each function that holds file id, in functab
// order, until it returns false.
func (x *lineIndex) postings(t *Table, id uint32, fn func(Function) bool) error {
	if x.start == nil {
		for f, err := range t.Functions() {
			if err != nil || !fn(f) {
				return err
			}
		}
		return nil
	}
	for _, i := range x.funcs[x.start[id]:x.start[id+1]] {
		f, _, err := t.funcAt(uint64(i))
		if err != nil || !fn(f) {
			return err
		}
	}
	return nil
}

// walkFile calls emit, in PC order, for every range of f's code that its
// tables attribute to file id and a line (not 0): with the line, the
// innermost inlined call (-1: f's own code) and the range's first PC. Its
// ranges are those of Function.Lines, and it fails where Lines does, or
// when it has decoded as many ranges as budget says.
func (x *lineIndex) walkFile(f Function, id uint32, budget *int64, emit func(line uint32, call int32, pc uint64)) error {
	if x.start == nil {
		if holds, err := x.holds(f, id, budget); !holds || err != nil {
			return err
		}
	}
	tree, hasTree, err := f.inlineTree()
	if err != nil {
		return err
	}
	l := &f.t.layout
	files, lines := f.rangeIter(f.field(l.pcfile)), f.rangeIter(f.field(l.pcln))
	inl := rangeIter{pcIter{lo: f.entry, hi: math.MaxUint64, val: -1}}
	if hasTree {
		inl = f.rangeIter(tree.index)
	}
	cu, end := x.cu(f), f.End()
	for pc := f.entry; pc < end; {
		if *budget--; *budget < 0 {
			return x.errWalk()
		}
		fno, line, ix := files.at(pc), lines.at(pc), inl.at(pc)
		if ix >= 0 {
			if _, ok := f.record(tree, ix); !ok {
				return f.formatError(errBadRecord)
			}
		}
		if line > 0 && x.fileID(cu, fno) == id {
			emit(uint32(line), ix, pc)
		}
		pc = min(files.hi, lines.hi, inl.hi, end)
	}
	return nil
}

// holds reports whether f's pcfile table names file id in [entry, end):
// a walk of one table, to spare the decoding of three for functions that
// do not hold the file when the postings were dropped.
func (x *lineIndex) holds(f Function, id uint32, budget *int64) (bool, error) {
	cu, end := x.cu(f), f.End()
	files := f.rangeIter(f.field(f.t.layout.pcfile))
	for pc := f.entry; pc < end; pc = files.hi {
		if *budget--; *budget < 0 {
			return false, x.errWalk()
		}
		if x.fileID(cu, files.at(pc)) == id {
			return true, nil
		}
		if files.hi == math.MaxUint64 {
			break
		}
	}
	return false, nil
}

// copyScratch is the copies of one function, reused from one function to
// the next.
type copyScratch struct{ c []scratchCopy }

type scratchCopy struct {
	line uint32
	call int32
	pc   uint64
}

var copyScratchPool = sync.Pool{New: func() any { return new(copyScratch) }}

// release returns s to the pool, unless it grew large.
func (s *copyScratch) release() {
	if cap(s.c) <= 1<<12 {
		s.c = s.c[:0]
		copyScratchPool.Put(s)
	}
}

// firstCopies sorts s by line, call and PC and keeps the first of each
// line and call: the copy's lowest PC.
func (s *copyScratch) firstCopies() []scratchCopy {
	slices.SortFunc(s.c, func(a, b scratchCopy) int {
		if c := cmp.Compare(a.line, b.line); c != 0 {
			return c
		}
		if c := cmp.Compare(a.call, b.call); c != 0 {
			return c
		}
		return cmp.Compare(a.pc, b.pc)
	})
	return slices.CompactFunc(s.c, func(a, b scratchCopy) bool { return a.line == b.line && a.call == b.call })
}

// fileLines returns the lines of file id, decoding them on first use.
func (x *lineIndex) fileLines(t *Table, id uint32) *fileLines {
	slot := &x.lines[id]
	if fl := slot.Load(); fl != nil {
		return fl
	}
	fl := x.decodeFile(t, id)
	size := int64(cap(fl.copies)) * lineCopySize
	if size > 0 && x.used.Add(size) > x.limit {
		x.used.Add(-size)
		fl = &fileLines{scan: true}
		size = 0
	}
	if !slot.CompareAndSwap(nil, fl) {
		// Another goroutine decoded the file first.
		x.used.Add(-size)
		fl = slot.Load()
	}
	return fl
}

// decodeFile decodes the copies of the lines of file id, or gives up
// (scan set) when they would take more than the index has left. It
// allocates at most about three times that room.
func (x *lineIndex) decodeFile(t *Table, id uint32) *fileLines {
	room := (x.limit - x.used.Load()) / lineCopySize
	budget := x.walkLimit
	var all []lineCopy
	full := false
	var err error
	perr := x.postings(t, id, func(f Function) bool {
		start := len(all)
		err = x.walkFile(f, id, &budget, func(line uint32, call int32, pc uint64) {
			switch {
			case full:
			case int64(len(all)) >= room || pc-f.entry > math.MaxUint32:
				full = true // too many, or not in a lineCopy: decode on each query
			default:
				if len(all) == cap(all) {
					all = slices.Grow(all, max(cap(all), 256)) // double, not 1.25×
				}
				all = append(all, lineCopy{line, f.idx, call, uint32(pc - f.entry)})
			}
		})
		if err != nil || full {
			return false
		}
		// One copy per line and call: the first, at the lowest PC.
		fc := all[start:]
		slices.SortFunc(fc, func(a, b lineCopy) int {
			if c := cmp.Compare(a.line, b.line); c != 0 {
				return c
			}
			if c := cmp.Compare(a.call, b.call); c != 0 {
				return c
			}
			return cmp.Compare(a.off, b.off)
		})
		fc = slices.CompactFunc(fc, func(a, b lineCopy) bool { return a.line == b.line && a.call == b.call })
		all = all[:start+len(fc)]
		return true
	})
	if err = cmp.Or(perr, err); err != nil {
		return &fileLines{err: err}
	}
	if full {
		return &fileLines{scan: true}
	}
	// By line and PC (functab order is address order in a sound table
	// only).
	slices.SortFunc(all, func(a, b lineCopy) int {
		if c := cmp.Compare(a.line, b.line); c != 0 {
			return c
		}
		if a.fn == b.fn {
			return cmp.Compare(a.off, b.off)
		}
		return cmp.Compare(t.entryAt(uint64(a.fn))+uint64(a.off), t.entryAt(uint64(b.fn))+uint64(b.off))
	})
	if cap(all)-len(all) > len(all)/4 {
		all = slices.Clone(all)
	}
	return &fileLines{copies: all}
}

// appendLine appends to buf the copies of file id's line, in PC order.
func (x *lineIndex) appendLine(t *Table, id, line uint32, buf []LinePC) ([]LinePC, error) {
	fl := x.fileLines(t, id)
	if fl.err != nil {
		return buf, fl.err
	}
	if fl.scan {
		return x.scanLine(t, id, line, buf)
	}
	k, _ := slices.BinarySearchFunc(fl.copies, line, func(c lineCopy, line uint32) int { return cmp.Compare(c.line, line) })
	for ; k < len(fl.copies) && fl.copies[k].line == line; k++ {
		c := fl.copies[k]
		f, _, err := t.funcAt(uint64(c.fn))
		if err != nil {
			return buf, err
		}
		if buf, err = appendLinePC(buf, f, c.call, f.entry+uint64(c.off)); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// scanLine is appendLine for a file whose lines are not kept: it decodes
// each of its functions.
func (x *lineIndex) scanLine(t *Table, id, line uint32, buf []LinePC) ([]LinePC, error) {
	start := len(buf)
	s := copyScratchPool.Get().(*copyScratch)
	defer s.release()
	budget := x.walkLimit
	var err error
	perr := x.postings(t, id, func(f Function) bool {
		s.c = s.c[:0]
		if err = x.walkFile(f, id, &budget, func(l uint32, call int32, pc uint64) {
			if l == line {
				s.c = append(s.c, scratchCopy{l, call, pc})
			}
		}); err != nil {
			return false
		}
		for _, c := range s.firstCopies() {
			if buf, err = appendLinePC(buf, f, c.call, c.pc); err != nil {
				return false
			}
		}
		return true
	})
	if err = cmp.Or(perr, err); err != nil {
		return buf, err
	}
	slices.SortFunc(buf[start:], func(a, b LinePC) int { return cmp.Compare(a.PC, b.PC) })
	return buf, nil
}

// appendLinePC appends the LinePC of a copy in f.
func appendLinePC(buf []LinePC, f Function, call int32, pc uint64) ([]LinePC, error) {
	name := f.Name()
	if call >= 0 {
		var err error
		if name, err = f.inlinedName(call); err != nil {
			return buf, err
		}
	}
	return append(buf, LinePC{PC: pc, Func: f, Function: name}), nil
}

// nextLine returns the first line at or after line that has a copy in
// file id, 0 if none.
func (x *lineIndex) nextLine(t *Table, id, line uint32) (uint32, error) {
	fl := x.fileLines(t, id)
	if fl.err != nil {
		return 0, fl.err
	}
	if !fl.scan {
		k, _ := slices.BinarySearchFunc(fl.copies, line, func(c lineCopy, line uint32) int { return cmp.Compare(c.line, line) })
		if k == len(fl.copies) {
			return 0, nil
		}
		return fl.copies[k].line, nil
	}
	// The lines are not kept: decode the file's functions.
	next := uint32(0)
	budget := x.walkLimit
	var err error
	perr := x.postings(t, id, func(f Function) bool {
		err = x.walkFile(f, id, &budget, func(l uint32, _ int32, _ uint64) {
			if l >= line && (next == 0 || l < next) {
				next = l
			}
		})
		return err == nil
	})
	if err = cmp.Or(perr, err); err != nil {
		return 0, err
	}
	return next, nil
}
