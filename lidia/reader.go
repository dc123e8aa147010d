package lidia

import (
	"bytes"
	"hash/crc32"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/gosym-dev/gosym/internal/mmapfile"
)

// noParent marks a range without an enclosing range in Reader.parent.
const noParent = math.MaxUint32

// Reader looks up addresses in a Lidia file. It is safe for concurrent use
// by several goroutines, Close included. The strings it returns stay valid
// after Close.
type Reader struct {
	data   []byte         // the whole file: a mapping, or the caller's bytes
	mapped *mmapfile.Data // holds data for a Reader made by Open; nil otherwise

	n     int    // number of ranges
	va    []byte // VA table
	vaW   int    // 4 or 8
	rng   []byte // range table
	fW    int    // 4 or 8
	strs  []byte // strings table, copied to the heap
	lines []byte // line tables
	lW    int    // 2 or 4
	nl    uint64 // number of line entries

	// The VA index, for files read with the backward walk: the ranges
	// whose VA is in [base+k<<shift, base+(k+1)<<shift) are those from
	// buckets[k] to buckets[k+1]-1.
	base    uint64
	shift   uint
	buckets []uint32

	// For files whose ranges nest, the address space cut into pieces of
	// one innermost range: piece k is [starts[k], starts[k+1]), and its
	// innermost range is inner[k] (noParent: none). The pieces whose
	// start is in [pbase+k<<pshift, pbase+(k+1)<<pshift) are those from
	// pbuckets[k] to pbuckets[k+1]-1.
	starts   []uint64
	inner    []uint32
	pbase    uint64
	pshift   uint
	pbuckets []uint32

	// nodes[i] indexes range i for files whose ranges nest (see the
	// package documentation); nil for other files, which Lookup reads
	// with Pyroscope's backward walk.
	nodes []node

	o      options
	closed atomic.Bool
}

// Open opens the named Lidia file, which must be a regular file (or a
// symbolic link to one): others, such as devices and FIFOs, are refused at
// once with an *fs.PathError. The file is mapped read-only where the
// operating system allows (Unix), else read into memory; the memory is
// released once the Reader is unreachable, not by Close. The strings table
// is copied to the heap when the file is opened, so the strings Lookup
// returns stay valid after Close and after the Reader is gone. Options: WithCRC verifies
// the checksums; WithLines, WithFiles and WithInlines set to false make
// Lookup leave out lines, files or inlined frames.
func Open(name string, opts ...Option) (*Reader, error) {
	file, err := mmapfile.Load(name)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(file.Bytes(), opts...)
	if err != nil {
		return nil, err
	}
	r.mapped = file
	return r, nil
}

// NewReader reads a Lidia file held in data, which must not be modified
// while the Reader is in use: the address and range tables are read in
// place. The strings table is copied, so the strings Lookup returns stay
// valid after data is gone. It checks the header and that every table lies
// in data; with WithCRC it also verifies the checksums. It then indexes the
// ranges once, in time linear in their number and, for a file whose ranges
// nest, about 30 bytes per range (see the package documentation, "Reading").
// Options are as for Open.
func NewReader(data []byte, opts ...Option) (*Reader, error) {
	r := &Reader{data: data, o: makeOptions(opts)}
	if len(data) < headerSize {
		return nil, corrupt("file of %d bytes has no header", len(data))
	}
	h := data[:headerSize]
	if m := le.Uint32(h[hMagic:]); m != magic {
		return nil, corrupt("bad magic %#x", m)
	}
	if v := le.Uint32(h[hVersion:]); v != version {
		return nil, corrupt("unsupported version %d", v)
	}
	vaW, fW, lW := le.Uint64(h[hVAWidth:]), le.Uint64(h[hRangeWidth:]), le.Uint64(h[hLineWidth:])
	n, nr, nl := le.Uint64(h[hVACount:]), le.Uint64(h[hRangeCount:]), le.Uint64(h[hLineCount:])
	if vaW != 4 && vaW != 8 {
		return nil, corrupt("VA entry size %d", vaW)
	}
	if fW != 4 && fW != 8 {
		return nil, corrupt("range field size %d", fW)
	}
	if n != nr {
		return nil, corrupt("%d VAs but %d ranges", n, nr)
	}
	if lW != 2 && lW != 4 {
		if nl != 0 {
			return nil, corrupt("line field size %d", lW)
		}
		lW = 2
	}
	var err error
	table := func(name string, off, count, size uint64) []byte {
		if err != nil {
			return nil
		}
		end := uint64(len(data))
		if off > end || (size != 0 && count > (end-off)/size) {
			err = corrupt("%s table (%d×%d bytes at %#x) outside the file of %d bytes", name, count, size, off, end)
			return nil
		}
		return data[off : off+count*size : off+count*size]
	}
	r.va = table("VA", le.Uint64(h[hVAOffset:]), n, vaW)
	r.rng = table("range", le.Uint64(h[hRangeOffset:]), n, numFields*fW)
	strs := table("strings", le.Uint64(h[hStrOffset:]), le.Uint64(h[hStrSize:]), 1)
	r.lines = table("line", le.Uint64(h[hLineOffset:]), nl, 2*lW)
	if err != nil {
		return nil, err
	}
	if r.o.crc {
		for _, c := range []struct {
			name string
			tab  []byte
			at   int
		}{{"VA", r.va, hVACRC}, {"strings", strs, hStrCRC}, {"range", r.rng, hRangeCRC}, {"line", r.lines, hLineCRC}} {
			if got, want := crc32.Checksum(c.tab, castagnoli), le.Uint32(h[c.at:]); got != want {
				return nil, corrupt("%s table CRC32C %#08x, header says %#08x", c.name, got, want)
			}
		}
	}
	r.n, r.vaW, r.fW, r.lW, r.nl = int(n), int(vaW), int(fW), int(lW), nl
	r.strs = bytes.Clone(strs)
	r.nodes = r.nest()
	if r.nodes != nil {
		r.pieces()
	} else {
		r.index()
	}
	return r, nil
}

// pieces cuts the address space of a file whose ranges nest into pieces
// of one innermost range (see Reader.starts) and indexes them.
func (r *Reader) pieces() {
	// Written files have about 1.5 pieces per range, at most 2.
	starts, inner := make([]uint64, 0, r.n+r.n/2+16), make([]uint32, 0, r.n+r.n/2+16)
	add := func(at uint64, i uint32) {
		n := len(starts)
		switch {
		case n > 0 && starts[n-1] == at:
			inner[n-1] = i
			if n > 1 && inner[n-2] == i {
				starts, inner = starts[:n-1], inner[:n-1]
			}
		case n > 0 && inner[n-1] == i:
		default:
			starts, inner = append(starts, at), append(inner, i)
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
	for i := range r.n {
		va := r.vaAt(i)
		closeTo(va)
		stack = append(stack, open{uint32(i), va + r.field(r.rec(i), fLength)})
		add(va, uint32(i))
	}
	closeTo(math.MaxUint64)
	r.starts, r.inner = starts, inner
	r.pbase, r.pshift, r.pbuckets = buckets(len(starts), func(k int) uint64 { return starts[k] })
}

// index builds the VA index that narrows the binary search of the walk to
// a few ranges, for a sorted VA table.
func (r *Reader) index() {
	r.base, r.shift, r.buckets = buckets(r.n, r.vaAt)
}

// buckets indexes n sorted keys: about one bucket for every eight keys
// (which span a cache line of 4-byte VAs), 4 bytes each. Keys in
// [base+k<<shift, base+(k+1)<<shift) are those from b[k] to b[k+1]-1. It
// returns no buckets for few keys, or keys out of order.
func buckets(n int, key func(int) uint64) (base uint64, shift uint, b []uint32) {
	if n < 64 || uint64(n) >= math.MaxUint32 {
		return 0, 0, nil
	}
	lo, hi := key(0), key(n-1)
	prev := lo
	for i := range n {
		if k := key(i); k < prev {
			return 0, 0, nil // not sorted: plain binary search
		} else {
			prev = k
		}
	}
	span := hi - lo + 1
	if span == 0 {
		span = math.MaxUint64 // lo = 0, hi = MaxUint64
	}
	for span>>shift > uint64(n)/8 {
		shift++
	}
	nb := int(span>>shift) + 1
	b = make([]uint32, nb+1)
	i := 0
	for k := range nb + 1 {
		// The first key at or above the bucket's start.
		start := lo + uint64(k)<<shift
		if k == nb || start < lo {
			i = n
		}
		for i < n && key(i) < start {
			i++
		}
		b[k] = uint32(i)
	}
	return lo, shift, b
}

// node is what a Reader indexes of a range of a file whose ranges nest:
// the range at depth-1 that holds it, and the lengths of its strings, so
// that Lookup need not read the strings table.
type node struct {
	parent             uint32 // noParent for a range of depth 0
	fn, file, callFile uint16 // string lengths; lenSlow: read the table
}

// lenSlow marks, in a node, a string that Lookup reads from the table: one
// of 65535 bytes or more, or a bad reference.
const lenSlow = math.MaxUint16

// nest indexes the ranges if they nest: sorted by (VA, depth), none empty,
// ranges at one depth disjoint, and each range at depth d ≥ 1 inside the
// last range at depth d-1 before it. Else it returns nil.
func (r *Reader) nest() []node {
	if uint64(r.n) >= noParent {
		return nil
	}
	nodes := make([]node, r.n)
	type open struct {
		i       uint32
		va, end uint64
	}
	var stack []open // the last range at each depth of the current chain
	for i := range r.n {
		va, rec := r.vaAt(i), r.rec(i)
		length, depth := r.field(rec, fLength), r.field(rec, fDepth)
		end := va + length
		if length == 0 || end < va || depth > uint64(len(stack)) {
			return nil
		}
		d := int(depth)
		if d < len(stack) && va < stack[d].end {
			return nil // overlaps the previous range at its depth, or unsorted
		}
		nd := &nodes[i]
		if d == 0 {
			if len(stack) > 0 && va < stack[0].va {
				return nil
			}
			nd.parent = noParent
		} else {
			p := stack[d-1]
			if va < p.va || end > p.end {
				return nil
			}
			nd.parent = p.i
		}
		nd.fn, nd.file, nd.callFile = r.strLen(r.field(rec, fFunc)), r.strLen(r.field(rec, fFile)), r.strLen(r.field(rec, fCallFile))
		stack = append(stack[:d], open{uint32(i), va, end})
	}
	return nodes
}

// strLen returns the length of the string at offset off, or lenSlow.
func (r *Reader) strLen(off uint64) uint16 {
	if s, ok := r.str(off); ok && len(s) < lenSlow {
		return uint16(len(s))
	}
	return lenSlow
}

// strOf returns the string at offset off, of length n (from a node).
func (r *Reader) strOf(off uint64, n uint16) (string, bool) {
	switch n {
	case 0:
		return "", true
	case lenSlow:
		return r.str(off)
	}
	return unsafe.String(&r.strs[off+4], n), true
}

// fileOf is strOf, or "" when files are turned off.
func (r *Reader) fileOf(off uint64, n uint16) (string, bool) {
	if !r.o.files {
		return "", true
	}
	return r.strOf(off, n)
}

// Close marks the Reader closed: Lookup after Close returns ErrClosed.
// Strings returned earlier stay valid. Close releases nothing itself: the
// memory of a Reader made by Open is released once the Reader is
// unreachable, so a Lookup running while Close is called completes
// normally. A second Close does nothing and returns nil.
func (r *Reader) Close() error {
	r.closed.Store(true)
	return nil
}

// Lookup appends to dst[:0] the frames at addr, innermost inlined call
// first and the physical function last, each with its function, file and
// line. An address that no range covers gives no frame and a nil error.
// Lookup allocates nothing when dst has room for the frames.
//
// In a file whose ranges nest, as Write makes them, the innermost frame
// takes its file from its range and its line from the range's line table;
// every outer frame takes its file and line from the call site recorded in
// the range one deeper; in a depth-0 range's alignment padding (see the
// package documentation), the frame has no file and line 0. Other files
// (such as Pyroscope's, which hold duplicate symbols) are read with
// Pyroscope's backward walk, which gives every covering range its own file
// and line.
func (r *Reader) Lookup(dst []Frame, addr uint64) ([]Frame, error) {
	dst = dst[:0]
	if r.closed.Load() {
		return dst, ErrClosed
	}
	if r.nodes == nil {
		i := r.search(addr)
		if i < 0 {
			return dst, nil
		}
		return r.walk(dst, i, addr)
	}
	k := r.piece(addr)
	if k < 0 || r.inner[k] == noParent {
		return dst, nil
	}
	i := int(r.inner[k])
	va, e, nd := r.vaAt(i), r.entry(i), r.nodes[i]
	if !r.o.inlines && e.depth != 0 {
		// Only the physical frame, with its file and line at the call
		// site in the range above it.
		inner, innerNd := e, nd
		for p := nd.parent; p != noParent; p = r.nodes[p].parent {
			i = int(p)
			if r.nodes[p].parent != noParent {
				inner, innerNd = r.entry(i), r.nodes[i]
			}
		}
		return r.outerFrame(dst, r.entry(i), r.nodes[i], &inner, innerNd)
	}
	fn, ok1 := r.strOf(e.fn, nd.fn)
	file, ok2 := r.fileOf(e.file, nd.file)
	line, ok3 := r.line(&e, addr-va)
	if !(ok1 && ok2 && ok3) {
		return dst, corrupt("range %d has a reference out of range", i)
	}
	if nd.parent == noParent && e.callLine != 0 && addr-va >= e.callLine-1 {
		file, line = "", 0 // alignment padding: no position
	}
	if !r.o.lines {
		line = 0
	}
	dst = append(dst, Frame{fn, file, line})
	for p := nd.parent; p != noParent; {
		o, ond := r.entry(int(p)), r.nodes[p]
		var err error
		if dst, err = r.outerFrame(dst, o, ond, &e, nd); err != nil {
			return dst, err
		}
		e, nd, p = o, ond, ond.parent
	}
	return dst, nil
}

// outerFrame appends the frame of range outer at the call site recorded in
// range inner, the range one deeper; on and in are their nodes.
func (r *Reader) outerFrame(dst []Frame, outer entry, on node, inner *entry, in node) ([]Frame, error) {
	fn, ok1 := r.strOf(outer.fn, on.fn)
	file, ok2 := r.fileOf(inner.callFile, in.callFile)
	line := inner.callLine
	if !(ok1 && ok2 && line <= math.MaxUint32) {
		return dst, corrupt("range has a reference out of range")
	}
	if !r.o.lines {
		line = 0
	}
	return append(dst, Frame{fn, file, uint32(line)}), nil
}

// walk is Pyroscope's lookup (the package doc, "Reading") for files whose
// ranges do not nest: from the last range at or before addr, backward,
// every range that covers addr is a frame, up to the first range of depth
// 0.
func (r *Reader) walk(dst []Frame, i int, addr uint64) ([]Frame, error) {
	for ; i >= 0; i-- {
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
			dst = append(dst, Frame{fn, file, line})
		}
		if e.depth == 0 {
			break
		}
	}
	return dst, nil
}

// piece returns the index of the piece (Reader.starts) that holds addr,
// or -1.
func (r *Reader) piece(addr uint64) int {
	lo, hi := 0, len(r.starts) // the answer + 1 is in [lo, hi]
	if r.pbuckets != nil {
		if addr < r.pbase {
			return -1
		}
		k := (addr - r.pbase) >> r.pshift
		if k+1 >= uint64(len(r.pbuckets)) {
			return len(r.starts) - 1 // past the last start
		}
		lo, hi = int(r.pbuckets[k]), int(r.pbuckets[k+1])
	}
	starts := r.starts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if starts[m] <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// search returns the index of the last range whose VA is at most addr, or
// -1.
func (r *Reader) search(addr uint64) int {
	lo, hi := 0, r.n // the answer + 1 is in [lo, hi]
	if r.buckets != nil {
		if addr < r.base {
			return -1
		}
		k := (addr - r.base) >> r.shift
		if k+1 >= uint64(len(r.buckets)) {
			return r.n - 1 // past the last VA
		}
		lo, hi = int(r.buckets[k]), int(r.buckets[k+1])
	}
	if r.vaW == 4 {
		if addr > math.MaxUint32 {
			addr = math.MaxUint32
		}
		a := uint32(addr)
		va := r.va
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if le.Uint32(va[4*m:]) <= a {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo - 1
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le.Uint64(r.va[8*m:]) <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func (r *Reader) vaAt(i int) uint64 {
	if r.vaW == 4 {
		return uint64(le.Uint32(r.va[4*i:]))
	}
	return le.Uint64(r.va[8*i:])
}

// entry is a decoded range entry.
type entry struct {
	length, depth, fn, file, lineIdx, lineCount, callFile, callLine uint64
}

// entry decodes range entry i.
func (r *Reader) entry(i int) entry {
	if r.fW == 4 {
		b := r.rng[i*32:]
		b = b[:32:32]
		return entry{
			uint64(le.Uint32(b[0:])), uint64(le.Uint32(b[4:])),
			uint64(le.Uint32(b[8:])), uint64(le.Uint32(b[12:])),
			uint64(le.Uint32(b[16:])), uint64(le.Uint32(b[20:])),
			uint64(le.Uint32(b[24:])), uint64(le.Uint32(b[28:])),
		}
	}
	b := r.rng[i*64:]
	b = b[:64:64]
	return entry{
		le.Uint64(b[0:]), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:]),
		le.Uint64(b[32:]), le.Uint64(b[40:]), le.Uint64(b[48:]), le.Uint64(b[56:]),
	}
}

// rec returns range entry i.
func (r *Reader) rec(i int) []byte {
	w := numFields * r.fW
	return r.rng[i*w : i*w+w]
}

// field returns field k of a range entry.
func (r *Reader) field(rec []byte, k int) uint64 {
	if r.fW == 4 {
		return uint64(le.Uint32(rec[4*k:]))
	}
	return le.Uint64(rec[8*k:])
}

// str returns the string at offset off of the strings table; ok is false if
// it does not lie in the table.
func (r *Reader) str(off uint64) (s string, ok bool) {
	if off == 0 {
		return "", true
	}
	t := r.strs
	if off > uint64(len(t)) || uint64(len(t))-off < 4 {
		return "", false
	}
	n := uint64(le.Uint32(t[off:]))
	if n > uint64(len(t))-off-4 {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	return unsafe.String(&t[off+4], n), true
}

// file is str, or "" when files are turned off.
func (r *Reader) file(off uint64) (string, bool) {
	if !r.o.files {
		return "", true
	}
	return r.str(off)
}

// line returns the line at offset rel from the VA of range e: the entry
// of its line table with the largest offset at most rel; 0 if none.
func (r *Reader) line(e *entry, rel uint64) (uint32, bool) {
	count := e.lineCount
	if count == 0 {
		return 0, true
	}
	idx := e.lineIdx
	if idx > r.nl || count > r.nl-idx {
		return 0, false
	}
	t, w := r.lines, uint64(r.lW)
	off := func(j uint64) uint64 {
		if w == 2 {
			return uint64(le.Uint16(t[4*j:]))
		}
		return uint64(le.Uint32(t[8*j:]))
	}
	// Find the first entry with an offset > rel; the one before it holds.
	// Offsets grow about evenly over a range, so first try a window
	// around the entry its position suggests: one or two cache lines.
	lo, hi := idx, idx+count
	if length := e.length; count > 16 && rel < length {
		h, l := bits.Mul64(count, rel)
		q, _ := bits.Div64(h, l, length) // < count, as rel < length
		g := idx + q
		wlo, whi := idx, min(g+8, hi)
		if g >= idx+8 {
			wlo = g - 8
		}
		if (wlo == idx || off(wlo) <= rel) && (whi == hi || off(whi) > rel) {
			lo, hi = wlo, whi
		}
	}
	first := idx
	for lo < hi {
		m := (lo + hi) >> 1
		if off(m) <= rel {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == first {
		return 0, true
	}
	if w == 2 {
		return uint32(le.Uint16(t[4*(lo-1)+2:])), true
	}
	return le.Uint32(t[8*(lo-1)+4:]), true
}
