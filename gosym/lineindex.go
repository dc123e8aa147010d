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
// first use, so that the first query costs little more than decoding the
// functions that hold the file asked for:
//
//   - The first LinePCs names the files and lists, for each, the functions
//     whose code may hold it (the postings). From Go 1.16 on, a function's
//     pcfile values index the file list of its compilation unit (its
//     cuOffset into the cutab: the unit's list runs to the next unit's);
//     the postings are the units that list the file, and reading every
//     function's cuOffset is all the work. Before, file numbers are global,
//     and every function's pcfile table is walked.
//   - The first query of a file walks the pcfile tables of the functions
//     its postings give, decodes the line tables of those that hold the
//     file, and keeps, for every copy of every line of the file (a
//     physical function's own code, or one inlined call in it), its lowest
//     PC, sorted by line and PC. Later queries of the file are binary
//     searches.
//
// A function is searched for the files of its unit only: a sound table
// names no other (cmd/link gives each function the file list of its unit).
//
// The memory is bounded by the size of the table whatever its bytes say,
// even when many functions share one line table (the linker shares
// identical tables; a damaged table can make every function use one that
// changes line at every byte). Go 1.2–1.15 postings are dropped if they
// outgrow maxPostings: then the first query of a file walks every
// function. The lines of the files share a limit of lineIndexLimit bytes:
// a file whose lines do not fit is not kept, and each of its queries
// decodes its functions again (keeping no more than one function's
// lines). Answers are the same either way.
type lineIndex struct {
	once   sync.Once
	err    error
	files  []string            // file names by id
	byBase map[string][]uint32 // base name → ids of the files that have it
	// slots maps a function's pcfile value to a file id: slot cu+value of
	// the cutab (Go 1.16+), or slot value of the file table (1.2–1.15).
	// Its entries are id+1, or noFile (or 0) for a slot that names none.
	slots []uint32
	// The postings: the units that may hold file id are
	// units[fstart[id]:fstart[id+1]], and the functab indices of the
	// functions of unit u are funcs[ustart[u]:ustart[u+1]], in functab
	// order. A unit is a compilation unit, by its offset in the cutab
	// (Go 1.16+), or one function, by functab index (ustart nil). fstart
	// is nil if there were too many: every function may hold every file.
	fstart, units []uint32
	ustart, funcs []uint32
	lines         []atomic.Pointer[fileLines] // by file id, once queried
	used          atomic.Int64                // bytes held by lines
	limit         int64                       // bytes lines may hold
}

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

// maxPostings bounds the postings of a Go 1.2–1.15 table with nfunc
// functions and a pctab of n bytes. Each posting but one per function
// needs a pair of the function's pcfile table: two bytes at least, unless
// the linker shares the table with other functions, which it does for the
// small tables of small functions.
func maxPostings(nfunc uint64, n int) int { return int(min(2*nfunc+uint64(n)/2, math.MaxInt32)) }

// lineIndex returns the index, building its first step on first use.
func (t *Table) lineIndex() (*lineIndex, error) {
	x := &t.byLine
	x.once.Do(func() {
		x.limit = lineIndexLimit(len(t.data))
		x.byBase = map[string][]uint32{}
		if t.hdr.magic == magic12 {
			x.err = t.indexFuncFiles(x)
		} else {
			x.err = t.indexUnitFiles(x)
		}
		x.lines = make([]atomic.Pointer[fileLines], len(x.files))
	})
	return x, x.err
}

// fileNamer gives file names ids, and slots their names' ids.
type fileNamer struct {
	x   *lineIndex
	ids map[string]uint32
}

// name sets slot's entry to the id of name, and returns the entry.
func (n *fileNamer) name(slot uint32, name string) uint32 {
	x := n.x
	if name == "" {
		x.slots[slot] = noFile
		return noFile
	}
	id, ok := n.ids[name]
	if !ok {
		id = uint32(len(x.files))
		n.ids[name] = id
		x.files = append(x.files, name)
		base := name[strings.LastIndexByte(name, '/')+1:]
		x.byBase[base] = append(x.byBase[base], id)
	}
	x.slots[slot] = id + 1
	return id + 1
}

// indexUnitFiles makes the postings of a Go 1.16+ table: every cutab slot
// named, and the functions grouped by unit.
func (t *Table) indexUnitFiles(x *lineIndex) error {
	nslots := uint64(len(t.hdr.cutab) / 4)
	x.slots = make([]uint32, nslots)
	// The units: the functions by cuOffset, a counting sort.
	x.ustart = make([]uint32, nslots+1)
	cuOff := t.layout.cuOffset
	cuOf := func(i uint64) (uint32, bool) {
		off, ok := t.funcOffAt(i)
		if !ok || off+uint64(cuOff)+4 > uint64(len(t.hdr.funcs)) {
			return 0, false
		}
		cu := t.hdr.rd.u32(t.hdr.funcs[off+uint64(cuOff):])
		return cu, uint64(cu) < nslots
	}
	for i := range t.hdr.nfunc {
		if cu, ok := cuOf(i); ok {
			x.ustart[cu+1]++
		}
	}
	for i := 1; i < len(x.ustart); i++ {
		x.ustart[i] += x.ustart[i-1]
	}
	x.funcs = make([]uint32, x.ustart[nslots])
	next := slices.Clone(x.ustart[:nslots])
	for i := range t.hdr.nfunc {
		if cu, ok := cuOf(i); ok {
			x.funcs[next[cu]] = uint32(i)
			next[cu]++
		}
	}
	// Name every slot, and post each unit under the files of its slots:
	// from its offset to the next unit's.
	n := fileNamer{x: x, ids: map[string]uint32{}}
	byOff := make([]uint32, len(t.hdr.filetab)) // filetab offset → slot entry
	postings := make([]uint64, 0, nslots)       // id<<32 | unit: one per slot at most
	stamp := make([]uint32, nslots)             // by id: 1 + the last unit posted under it (ids < nslots)
	unit := uint32(noFile)
	for s := range uint32(nslots) {
		if x.ustart[s+1] > x.ustart[s] {
			unit = s
		}
		off := t.hdr.rd.u32(t.hdr.cutab[4*s:])
		var e uint32
		switch {
		case off == math.MaxUint32:
			e = n.name(s, "")
		case uint64(off) < uint64(len(byOff)) && byOff[off] != 0:
			e = byOff[off]
			x.slots[s] = e
		default:
			e = n.name(s, t.files.at(uint64(off)))
			if uint64(off) < uint64(len(byOff)) {
				byOff[off] = e
			}
		}
		if e == noFile || unit == noFile {
			continue
		}
		if id := e - 1; stamp[id] != unit+1 {
			stamp[id] = unit + 1
			postings = append(postings, uint64(id)<<32|uint64(unit))
		}
	}
	x.fstart, x.units = csr(postings, len(x.files))
	return nil
}

// indexFuncFiles makes the postings of a Go 1.2–1.15 table: every
// function's pcfile table is walked.
func (t *Table) indexFuncFiles(x *lineIndex) error {
	n, _ := t.hdr.rd.u32At(t.hdr.filetab, 0)
	x.slots = make([]uint32, min(uint64(n), uint64(max(len(t.hdr.filetab)-4, 0)/4))+1)
	namer := fileNamer{x: x, ids: map[string]uint32{}}
	limit := maxPostings(t.hdr.nfunc, len(t.hdr.pctab))
	var postings []uint64 // id<<32 | functab index, by function
	var stamp []uint32    // by id: 1 + the last function posted under it
	dropped := false
	for f, err := range t.Functions() {
		if err != nil {
			return err
		}
		end := f.End()
		files := f.rangeIter(f.field(t.layout.pcfile))
		for pc := f.entry; pc < end; pc = files.hi {
			fno := files.at(pc)
			if slot, ok := x.slot(0, fno); ok {
				e := x.slots[slot]
				if e == 0 {
					e = namer.name(slot, t.globalFile(fno))
				}
				if e != noFile && !dropped {
					id := e - 1
					for uint64(len(stamp)) <= uint64(id) {
						stamp = append(stamp, 0)
					}
					if stamp[id] != f.idx+1 {
						stamp[id] = f.idx + 1
						postings = append(postings, uint64(id)<<32|uint64(f.idx))
						if len(postings) > limit {
							postings, dropped = nil, true // too many: keep none
						}
					}
				}
			}
			if files.hi == math.MaxUint64 {
				break
			}
		}
	}
	if !dropped {
		x.fstart, x.units = csr(postings, len(x.files))
	}
	return nil
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

// cu returns f's offset in the cutab (Go 1.16+).
func (x *lineIndex) cu(f Function) uint32 {
	if f.t.hdr.magic == magic12 {
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
	if s, ok := x.slot(cu, fno); ok && x.slots[s] != 0 && x.slots[s] != noFile {
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

// postings calls fn for each function that may hold file id, in functab
// order within each unit, until it returns false.
func (x *lineIndex) postings(t *Table, id uint32, fn func(Function) bool) error {
	call := func(i uint32) (bool, error) {
		f, ok, err := t.funcAt(uint64(i))
		if err != nil || !ok {
			return err == nil, err
		}
		return fn(f), nil
	}
	if x.fstart == nil {
		for i := range uint32(t.hdr.nfunc) {
			if more, err := call(i); !more {
				return err
			}
		}
		return nil
	}
	for _, u := range x.units[x.fstart[id]:x.fstart[id+1]] {
		if x.ustart == nil {
			if more, err := call(u); !more {
				return err
			}
			continue
		}
		for _, i := range x.funcs[x.ustart[u]:x.ustart[u+1]] {
			if more, err := call(i); !more {
				return err
			}
		}
	}
	return nil
}

// walkFile calls emit, in PC order, for every range of f's code that its
// tables attribute to file id and a line (not 0): with the line, the
// innermost inlined call (-1: f's own code) and the range's first PC. Its
// ranges are those of Function.Lines, and it fails where Lines does.
func (x *lineIndex) walkFile(f Function, id uint32, emit func(line uint32, call int32, pc uint64)) error {
	if !x.holds(f, id) {
		return nil
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
// a walk of one table, to spare the decoding of three for the functions
// of a unit that do not hold the file.
func (x *lineIndex) holds(f Function, id uint32) bool {
	cu, end := x.cu(f), f.End()
	files := f.rangeIter(f.field(f.t.layout.pcfile))
	for pc := f.entry; pc < end; pc = files.hi {
		if x.fileID(cu, files.at(pc)) == id {
			return true
		}
		if files.hi == math.MaxUint64 {
			break
		}
	}
	return false
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
// (scan set) when they would take more than the index has left.
func (x *lineIndex) decodeFile(t *Table, id uint32) *fileLines {
	room := (x.limit - x.used.Load()) / lineCopySize
	type copyPC struct {
		lineCopy
		pc uint64
	}
	var all []copyPC
	s := copyScratchPool.Get().(*copyScratch)
	defer s.release()
	full := false
	err := x.postings(t, id, func(f Function) bool {
		s.c = s.c[:0]
		err := x.walkFile(f, id, func(line uint32, call int32, pc uint64) {
			if int64(len(all)+len(s.c)) < room {
				s.c = append(s.c, scratchCopy{line, call, pc})
			} else {
				full = true
			}
		})
		if err != nil || full {
			full = full || err == nil
			return false
		}
		for _, c := range s.firstCopies() {
			if c.pc-f.entry > math.MaxUint32 {
				full = true // not in a lineCopy: decode each time
				return false
			}
			all = append(all, copyPC{lineCopy{c.line, f.idx, c.call, uint32(c.pc - f.entry)}, c.pc})
		}
		return true
	})
	if err != nil {
		return &fileLines{err: err}
	}
	if full {
		return &fileLines{scan: true}
	}
	slices.SortFunc(all, func(a, b copyPC) int {
		if c := cmp.Compare(a.line, b.line); c != 0 {
			return c
		}
		return cmp.Compare(a.pc, b.pc)
	})
	copies := make([]lineCopy, len(all))
	for i, c := range all {
		copies[i] = c.lineCopy
	}
	return &fileLines{copies: copies}
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
	var err error
	perr := x.postings(t, id, func(f Function) bool {
		s.c = s.c[:0]
		if err = x.walkFile(f, id, func(l uint32, call int32, pc uint64) {
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
	return append(buf, LinePC{PC: pc, Function: f, Name: name}), nil
}
