package lidia

import (
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/budget"
	"github.com/gosym-dev/gosym/object"
)

// Write emits the symbol table t as a Lidia file: for every function, the
// depth-0 ranges that cover it, the ranges of its inlined calls with their
// call sites, line tables and source files, unless options leave them out
// (WithLines, WithFiles, WithInlines); and a depth-0 range for each
// function symbol of t's object (C code of cgo and externally linked
// binaries) that no Go function covers. What the ranges mean is described in
// the package documentation. Write builds the tables in memory and then
// writes the header and the tables in order, so w need not be an
// io.Seeker. Addresses are link-time addresses, as t's.
//
// The names written come from the binary, and so cannot take more room
// than it: Write fails with an error wrapping gosym.ErrCorrupted when they
// would total more than twice its size (as overlapping names, in a name
// table that lost its NUL bytes, would), rather than write a file or use
// memory out of proportion with the binary.
func Write(w io.Writer, t *gosym.Table, opts ...Option) error {
	b := newBuilder(makeOptions(opts), t.NumFunctions())
	b.maxNames = budget.Names(t.Object())
	syms := object.FuncSymbols(t.Object())
	k := 0
	for f, err := range t.Functions() {
		if err != nil {
			return err
		}
		k = b.addSymbols(syms, k, f.Entry())
		if err := b.addFunction(f); err != nil {
			return err
		}
		b.end = max(b.end, f.End())
	}
	b.addSymbols(syms, k, math.MaxUint64)
	return b.writeTo(w)
}

// maxWalk bounds the number of ranges Pyroscope's lookup reads, walking
// backward from an address to the depth-0 range that covers it: the
// ranges from a depth-0 range up to the next one.
const maxWalk = 64

// record is one range entry. Every field but the VA fits in 32 bits for
// any Go binary (the pclntab itself stores 32-bit offsets), so the range
// table's field width is always 4; the VA table's is 8 when some address
// needs it (Mach-O on 64-bit targets links text above 4 GiB).
type record struct {
	va                                 uint64
	length, depth, fn, file            uint32
	lineIdx, lineCount, callFile, call uint32
}

// lineEntry is one entry of a line table: an offset from the range's VA
// and the line from there on.
type lineEntry struct{ off, line uint32 }

// openRange is a range being built: its record, its line entries so far
// and its file.
type openRange struct {
	rec   int
	lines []lineEntry
	file  string // the file of its frame; "" while unknown
}

// chunkBits sizes the chunks of the builder's lists, which grow without
// copying.
const chunkBits = 12

// chunks is a list stored in fixed-size chunks.
type chunks[T any] struct {
	c [][]T
	n int
}

func (c *chunks[T]) add(v T) int {
	if c.n>>chunkBits == len(c.c) {
		c.c = append(c.c, make([]T, 1<<chunkBits))
	}
	c.c[c.n>>chunkBits][c.n&(1<<chunkBits-1)] = v
	c.n++
	return c.n - 1
}

func (c *chunks[T]) at(i int) *T { return &c.c[i>>chunkBits][i&(1<<chunkBits-1)] }

// byteList is a list of bytes stored in chunks of blockSize, which grows
// without copying: a table built by appending, as it is written.
type byteList struct {
	c [][]byte // full chunks, and the last one, of length what it holds
	n int      // the bytes held
}

// add appends p, which is only read.
func (l *byteList) add(p []byte) {
	for len(p) > 0 {
		if len(l.c) == 0 || len(l.c[len(l.c)-1]) == blockSize {
			l.c = append(l.c, make([]byte, 0, blockSize))
		}
		last := &l.c[len(l.c)-1]
		k := min(len(p), blockSize-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
		l.n += k
	}
}

// strCacheEntry remembers the offset of a string by its address, so that
// the many lookups of the same name (gosym hands out one string per name)
// skip hashing it. Holding s keeps its memory, so the address cannot be
// reused for another string.
type strCacheEntry struct {
	s   string
	off uint32
}

// builder accumulates the tables of a file, function by function.
type builder struct {
	o   options
	err error  // a table outgrew 32-bit offsets
	end uint64 // the end of the last depth-0 range

	recs  chunks[record]
	lines chunks[lineEntry]
	// lineTabs maps a hash of a line table to the index of the first
	// table with that hash, to share identical tables.
	lineTabs map[uint64]uint32
	strs     byteList
	strOff   map[string]uint32
	names    uint64 // bytes of the strings in strs, without length fields
	maxNames uint64 // the most names may total (budget.Names)
	strCache [1 << 12]strCacheEntry

	// Per-function state, reused. The frames of a function are nodes: a
	// function, file and line, and the node of the frame that calls it.
	// Node k < len(ranges) is the innermost frame of the function's Lines
	// range k; node len(ranges)+c is the call site of inlined call c, a
	// frame of its caller (InlinedCalls).
	lr     []gosym.FunctionLine
	calls  []gosym.InlinedCall
	nodes  []gosym.FunctionLine
	parent []int32 // caller node; -1: none
	cur    []int32 // the stack of the current piece, outermost first
	prev   []int32 // the stack of the previous piece
	open   []openRange
	nopen  int // open[:nopen] are the ranges being built, by depth
	// noPos says whether the open depth-0 range ends, so far, in PCs
	// without a position (alignment padding), from noPosAt on.
	noPos   bool
	noPosAt uint64
}

func newBuilder(o options, nfunc int) *builder {
	b := &builder{
		o:        o,
		maxNames: math.MaxUint64,
		lineTabs: make(map[uint64]uint32, nfunc),
		strOff:   make(map[string]uint32, nfunc+nfunc/4),
	}
	b.addString("") // "" at offset 0
	return b
}

// str returns the strings-table offset of s, adding it if new.
func (b *builder) str(s string) uint32 {
	if len(s) == 0 {
		return 0
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	c := &b.strCache[(p>>3^p>>15^uintptr(len(s)))&uintptr(len(b.strCache)-1)]
	if len(c.s) == len(s) && unsafe.StringData(c.s) == unsafe.StringData(s) {
		return c.off
	}
	off, ok := b.strOff[s]
	if !ok {
		off = b.addString(s)
		b.strOff[s] = off
	}
	c.s, c.off = s, off
	return off
}

// addString appends s to the strings table.
func (b *builder) addString(s string) uint32 {
	off := b.strs.n
	if b.names+uint64(len(s)) > b.maxNames {
		if b.err == nil {
			b.err = fmt.Errorf("lidia: %w: names total more than %d bytes, out of proportion with the binary (names that overlap, without NUL bytes?)", gosym.ErrCorrupted, b.maxNames)
		}
		return 0
	}
	if uint64(off)+4+uint64(len(s)) > math.MaxUint32 {
		b.err = fmt.Errorf("lidia: strings table over 4 GiB")
		return 0
	}
	b.names += uint64(len(s))
	var size [4]byte
	le.PutUint32(size[:], uint32(len(s)))
	b.strs.add(size[:])
	b.strs.add(unsafe.Slice(unsafe.StringData(s), len(s)))
	return uint32(off)
}

// addFunction adds the ranges of one physical function.
func (b *builder) addFunction(f gosym.Function) error {
	entry, end := f.Entry(), f.End()
	if end <= entry {
		return nil
	}
	if end-entry > math.MaxUint32 {
		return fmt.Errorf("lidia: %s: function of %d bytes", f.Name(), end-entry)
	}
	lr, err := f.Lines(b.lr)
	b.lr = lr
	if err != nil {
		return err
	}
	fl := lr
	if len(fl) == 0 || fl[0].PCLo != entry || fl[len(fl)-1].PCHi != end {
		return fmt.Errorf("lidia: %s: lines do not cover [%#x, %#x)", f.Name(), entry, end)
	}
	calls, err := f.InlinedCalls(b.calls)
	b.calls = calls
	if err != nil {
		return err
	}
	n := len(fl)
	b.nodes, b.parent = grow(b.nodes, n+len(calls)), grow(b.parent, n+len(calls))
	copy(b.nodes, fl)
	for k := range fl {
		if c := fl[k].Call; c >= len(calls) {
			return fmt.Errorf("lidia: %s: range at %#x in inlined call %d of %d", f.Name(), fl[k].PCLo, c, len(calls))
		}
		b.parent[k] = callSite(n, fl[k].Call)
	}
	for c, call := range calls {
		caller := f.Name()
		if call.Parent >= 0 {
			caller = calls[call.Parent].Name
		}
		b.nodes[n+c] = gosym.FunctionLine{Function: caller, File: call.CallFile, Line: call.CallLine}
		b.parent[n+c] = callSite(n, call.Parent)
	}
	b.prev = b.prev[:0]
	for k := range fl {
		b.stack(int32(k))
		b.piece(fl[k].PCLo)
	}
	b.closeFrom(0, end)
	return b.err
}

// callSite returns the node of the call site of inlined call c, in a
// function of n ranges; -1 for c = -1, the function's own code.
func callSite(n, c int) int32 {
	if c < 0 {
		return -1
	}
	return int32(n + c)
}

// grow returns s resized to n, reusing its memory.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// stack sets b.cur to the inline stack whose innermost frame is node k,
// outermost first, as the options want it. The walk ends: gosym's
// InlinedCalls puts every call after its parent, so parents only decrease.
func (b *builder) stack(k int32) {
	n := 0
	root := k
	for j := k; j >= 0; n++ {
		root = j
		j = b.parent[j]
	}
	if !b.o.inlines {
		b.cur = append(b.cur[:0], root)
		return
	}
	b.cur = grow(b.cur, n)
	for i, j := n-1, k; i >= 0; i-- {
		b.cur[i] = j
		j = b.parent[j]
	}
}

// piece adds the PCs from lo on (up to the next piece) with the stack
// b.cur. A range goes on while its function and call site stay and, with
// files, while the file of its frame stays: the file a range holds is its
// frame's at every PC it covers, as the innermost frame (the code's own
// file) and as an outer frame (the file of the call site in it), since
// Pyroscope's reader reports each range's file for every frame. An unknown
// file (alignment padding) fits any. The other ranges are closed at lo and
// new ones start there.
func (b *builder) piece(lo uint64) {
	cur, prev, nodes := b.cur, b.prev, b.nodes
	last := len(cur) - 1
	// d is the first depth whose range does not go on.
	d := 0
	for d <= last && d < len(prev) {
		x, y := &nodes[cur[d]], &nodes[prev[d]]
		same := cur[d] == prev[d]
		if !same && x.Function != y.Function {
			break
		}
		if o := &b.open[d]; b.o.files && x.File != "" && o.file != "" && x.File != o.file {
			break
		}
		if d < last && (d == len(prev)-1 || (!same && (x.Line != y.Line || (b.o.files && x.File != y.File)))) {
			// Frame d goes on, but calls from another place (or from
			// where there was no call): a new range at d+1.
			d++
			break
		}
		d++
	}
	if d > 0 && d <= last && last < maxWalk && b.recs.n-b.open[0].rec+last-d+1 > maxWalk {
		// The new ranges would make Pyroscope's walk back to the
		// depth-0 range too long: split that range, and every range open
		// at lo, here.
		d = 0
	}
	b.closeFrom(d, lo)
	if b.o.files {
		// A range that goes on takes its first known file.
		for e := range d {
			if o := &b.open[e]; o.file == "" && nodes[cur[e]].File != "" {
				o.file = nodes[cur[e]].File
				b.recs.at(o.rec).file = b.str(o.file)
			}
		}
	}
	for e := d; e <= last; e++ {
		n := &nodes[cur[e]]
		r := record{va: lo, depth: uint32(e), fn: b.str(n.Function)}
		if b.o.files {
			r.file = b.str(n.File)
		}
		if e > 0 {
			c := &nodes[cur[e-1]]
			if b.o.files {
				r.callFile = b.str(c.File)
			}
			if b.o.lines {
				r.call = c.Line
			}
		}
		if e == len(b.open) {
			b.open = append(b.open, openRange{})
		}
		o := &b.open[e]
		o.rec = b.recs.add(r)
		o.lines = o.lines[:0]
		o.file = n.File
	}
	b.nopen = last + 1
	in := &b.open[last]
	x := &nodes[cur[last]]
	if d == 0 {
		b.noPos = false
	}
	if last == 0 && x.File == "" && x.Line == 0 {
		// The function's own code without a position: alignment
		// padding, if it runs to the end of the range (closeFrom).
		if !b.noPos {
			b.noPos, b.noPosAt = true, lo
		}
		b.prev, b.cur = cur, prev
		return
	}
	b.noPos = false
	if b.o.lines {
		// The innermost range's line. Its table need only be right where
		// it is the innermost frame, so the first entry is at offset 0
		// and a line that resumes after deeper code needs no new entry.
		if n := len(in.lines); n == 0 {
			in.lines = append(in.lines, lineEntry{0, x.Line})
		} else if in.lines[n-1].line != x.Line {
			in.lines = append(in.lines, lineEntry{uint32(lo - b.recs.at(in.rec).va), x.Line})
		}
	}
	b.prev, b.cur = cur, prev
}

// closeFrom closes the open ranges at depth d and deeper at end.
func (b *builder) closeFrom(d int, end uint64) {
	for e := b.nopen - 1; e >= d; e-- {
		o := &b.open[e]
		r := b.recs.at(o.rec)
		r.length = uint32(end - r.va)
		if e == 0 && b.noPos {
			r.call = uint32(b.noPosAt-r.va) + 1
		}
		if b.o.lines {
			r.lineIdx, r.lineCount = b.lineTable(o.lines)
		}
	}
	b.nopen = min(b.nopen, d)
}

// lineTable adds t to the line tables, sharing an identical earlier one,
// and returns its index and count.
func (b *builder) lineTable(t []lineEntry) (idx, count uint32) {
	if len(t) == 0 {
		return uint32(b.lines.n), 0
	}
	h := uint64(len(t)) * 0x9e3779b97f4a7c15
	for _, e := range t {
		h = (h ^ (uint64(e.off)<<32 | uint64(e.line))) * 0xff51afd7ed558ccd
		h ^= h >> 29
	}
	i, ok := b.lineTabs[h]
	if ok && int(i)+len(t) <= b.lines.n {
		same := true
		for j, e := range t {
			if *b.lines.at(int(i) + j) != e {
				same = false
				break
			}
		}
		if same {
			return i, uint32(len(t))
		}
	}
	if uint64(b.lines.n)+uint64(len(t)) > math.MaxUint32 {
		b.err = fmt.Errorf("lidia: line tables over 4G entries")
		return 0, 0
	}
	idx = uint32(b.lines.n)
	if !ok {
		b.lineTabs[h] = idx
	}
	for _, e := range t {
		b.lines.add(e)
	}
	return idx, uint32(len(t))
}

// writeTo writes the header and the tables. It encodes the tables twice,
// a block at a time: once for the checksums the header holds, once to
// write them.
func (b *builder) writeTo(w io.Writer) error {
	if b.err != nil {
		return b.err
	}
	n := uint64(b.recs.n)
	vaW, lW := uint64(4), uint64(2)
	for i := range b.recs.n {
		if b.recs.at(i).va > math.MaxUint32 {
			vaW = 8
			break
		}
	}
	for i := range b.lines.n {
		if e := b.lines.at(i); e.off > math.MaxUint16 || e.line > math.MaxUint16 {
			lW = 4
			break
		}
	}
	const fW = 4
	nl := uint64(b.lines.n)
	vaSize, rangeSize := n*vaW, n*numFields*fW
	strSize := uint64(b.strs.n)

	tables := []func(emit func([]byte) error) error{
		func(emit func([]byte) error) error { return b.encodeVA(emit, vaW) },
		b.encodeRanges,
		b.encodeStrings,
		func(emit func([]byte) error) error { return b.encodeLines(emit, lW) },
	}
	var crcs [4]uint32
	for i, enc := range tables {
		enc(func(p []byte) error {
			crcs[i] = crc32.Update(crcs[i], castagnoli, p)
			return nil
		})
	}

	h := make([]byte, headerSize)
	vaOff := uint64(headerSize)
	rangeOff := vaOff + vaSize
	strOff := rangeOff + rangeSize
	lineOff := strOff + strSize
	le.PutUint32(h[hMagic:], magic)
	le.PutUint32(h[hVersion:], version)
	le.PutUint64(h[hVAWidth:], vaW)
	le.PutUint64(h[hVACount:], n)
	le.PutUint64(h[hVAOffset:], vaOff)
	le.PutUint32(h[hVACRC:], crcs[0])
	le.PutUint64(h[hRangeWidth:], fW)
	le.PutUint64(h[hRangeCount:], n)
	le.PutUint64(h[hRangeOffset:], rangeOff)
	le.PutUint32(h[hRangeCRC:], crcs[1])
	le.PutUint64(h[hStrSize:], strSize)
	le.PutUint64(h[hStrOffset:], strOff)
	le.PutUint32(h[hStrCRC:], crcs[2])
	le.PutUint64(h[hLineWidth:], lW)
	le.PutUint64(h[hLineCount:], nl)
	le.PutUint64(h[hLineOffset:], lineOff)
	le.PutUint32(h[hLineCRC:], crcs[3])

	if _, err := w.Write(h); err != nil {
		return err
	}
	write := func(p []byte) error {
		_, err := w.Write(p)
		return err
	}
	for _, enc := range tables {
		if err := enc(write); err != nil {
			return err
		}
	}
	return nil
}

// blockSize is the size of the blocks the encoders emit.
const blockSize = 64 << 10

// encodeVA emits the VA table, entries of w bytes.
func (b *builder) encodeVA(emit func([]byte) error, w uint64) error {
	buf := make([]byte, 0, blockSize)
	for i := range b.recs.n {
		va := b.recs.at(i).va
		if w == 4 {
			buf = le.AppendUint32(buf, uint32(va))
		} else {
			buf = le.AppendUint64(buf, va)
		}
		if len(buf) > blockSize-8 {
			if err := emit(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return emit(buf)
}

// encodeRanges emits the range table, fields of 4 bytes.
func (b *builder) encodeRanges(emit func([]byte) error) error {
	buf := make([]byte, 0, blockSize)
	for i := range b.recs.n {
		r := b.recs.at(i)
		buf = le.AppendUint32(buf, r.length)
		buf = le.AppendUint32(buf, r.depth)
		buf = le.AppendUint32(buf, r.fn)
		buf = le.AppendUint32(buf, r.file)
		buf = le.AppendUint32(buf, r.lineIdx)
		buf = le.AppendUint32(buf, r.lineCount)
		buf = le.AppendUint32(buf, r.callFile)
		buf = le.AppendUint32(buf, r.call)
		if len(buf) > blockSize-numFields*4 {
			if err := emit(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return emit(buf)
}

// encodeStrings emits the strings table.
func (b *builder) encodeStrings(emit func([]byte) error) error {
	for _, c := range b.strs.c {
		if err := emit(c); err != nil {
			return err
		}
	}
	return nil
}

// encodeLines emits the line tables, fields of w bytes.
func (b *builder) encodeLines(emit func([]byte) error, w uint64) error {
	buf := make([]byte, 0, blockSize)
	for i := range b.lines.n {
		e := b.lines.at(i)
		if w == 2 {
			buf = le.AppendUint16(buf, uint16(e.off))
			buf = le.AppendUint16(buf, uint16(e.line))
		} else {
			buf = le.AppendUint32(buf, e.off)
			buf = le.AppendUint32(buf, e.line)
		}
		if len(buf) > blockSize-8 {
			if err := emit(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return emit(buf)
}
