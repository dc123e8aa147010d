package gsym

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strings"
	"unsafe"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/budget"
	"github.com/gosym-dev/gosym/object"
)

// Write emits the symbol table t as a GSYM file (version 1, as LLVM's
// llvm-gsymutil reads it): one FunctionInfo for every function of t with
// at least one PC, covering [Entry, End) (alignment padding included),
// with its name as stored in the binary, a line table giving the
// innermost file and line at every PC, and, for a function with inlined
// code, its whole inline tree: a node for every inlined call that has
// PCs, with its PC ranges and call site. Looked up at any PC of a
// function, by Reader.Lookup or by llvm-gsymutil, the file gives the
// frames of t's ResolveLocations, innermost first, with their functions,
// files and lines.
//
// Addresses are t's link-time addresses: the header's base address is
// the first function's entry. The file is in t's object's byte order, and
// its UUID is the object's GNU build ID when it has one of at most 20
// bytes. The output depends only on t: the same binary gives the same
// bytes. Write builds the file in memory and writes it with one call to
// w.Write per table.
//
// The names written come from the binary, and so cannot take more room
// than it: Write fails with an error wrapping gosym.ErrCorrupted when the
// distinct names and files would total more than twice its size (as
// overlapping names in a damaged name table would), rather than write a
// file out of proportion with the binary.
func Write(w io.Writer, t *gosym.Table) error {
	obj := t.Object()
	b := &builder{
		order:    byteOrder(obj.Endian()),
		strOff:   make(map[string]uint32, t.NumFunctions()+t.NumFunctions()/4),
		fileIdx:  make(map[string]uint32),
		maxNames: budget.Names(obj),
		empty:    math.MaxUint32,
	}
	b.strs = append(b.strs, 0) // "" at offset 0
	b.files = append(b.files, 0, 0)
	for f, err := range t.Functions() {
		if err != nil {
			return err
		}
		if err := b.addFunction(f); err != nil {
			return err
		}
	}
	if b.err != nil {
		return b.err
	}
	var uuid []byte
	if gnu, _, err := object.BuildIDs(obj); err == nil && gnu != "" {
		if id, err := hex.DecodeString(gnu); err == nil && len(id) <= maxUUID {
			uuid = id
		}
	}
	return b.writeTo(w, uuid)
}

// endian is a byte order that also appends.
type endian interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// byteOrder returns o as an endian: big-endian if o is, else
// little-endian.
func byteOrder(o binary.ByteOrder) endian {
	if o == binary.ByteOrder(binary.BigEndian) {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// builder accumulates the tables of a file, function by function.
type builder struct {
	order endian
	err   error // a string outgrew the budget or 32-bit offsets

	addrs  []uint64 // the entry of every FunctionInfo
	infos  []uint32 // its offset from the first
	chunks [][]byte // the FunctionInfos, each 4-byte aligned, in chunks
	nfis   uint64   // their bytes
	fis    []byte   // the FunctionInfo being built

	strs      []byte            // the string table, NUL-terminated strings
	strOff    map[string]uint32 // offsets of the strings in strs
	strCache  ptrCache
	names     uint64 // bytes of names added
	maxNames  uint64
	files     []uint32          // the file table: directory and base name offsets
	fileIdx   map[string]uint32 // index of a path in files
	fileCache ptrCache
	empty     uint32 // offset of the second "" (see file); MaxUint32 until made

	// Per-function state, reused.
	lines  []gosym.FunctionLine
	calls  []gosym.InlinedCall
	rows   []row
	deltas []delta
	nodes  []node
	child  []int32 // child[c]: the first child of node c; last slot: of the root
	next   []int32 // next[c]: the next sibling of node c
	stack  []int32
	hist   [2*histSpan + 1]int
}

// row is a line table row: from addr on, file and line.
type row struct {
	addr       uint64
	file, line uint32
}

// pcRange is [lo, hi).
type pcRange struct{ lo, hi uint64 }

// node is an inlined call being written, with its ranges so far.
type node struct {
	ranges []pcRange
}

// ptrCache remembers a number for each of the strings most recently
// given, by their address: the many lookups of the same name (gosym
// hands out one string per name and file) skip hashing it. An entry
// holding s keeps its memory, so the address cannot be reused for
// another string.
type ptrCache [1 << 12]struct {
	s string
	v uint32
}

// get returns the number of s, from the cache or from f. The empty
// string is not cached: it has no address of its own.
func (c *ptrCache) get(s string, f func(string) uint32) uint32 {
	if s == "" {
		return f(s)
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	e := &c[(p>>3^p>>15^uintptr(len(s)))&uintptr(len(c)-1)]
	if len(e.s) == len(s) && unsafe.StringData(e.s) == unsafe.StringData(s) {
		return e.v
	}
	v := f(s)
	e.s, e.v = s, v
	return v
}

// str returns the string-table offset of s, adding it if new.
func (b *builder) str(s string) uint32 {
	if s == "" {
		return 0
	}
	return b.strCache.get(s, b.strOffset)
}

// strOffset is str without the cache.
func (b *builder) strOffset(s string) uint32 {
	if off, ok := b.strOff[s]; ok {
		return off
	}
	off := uint64(len(b.strs))
	b.names += uint64(len(s))
	if b.names > b.maxNames {
		if b.err == nil {
			b.err = fmt.Errorf("gsym: %w: names total more than %d bytes, out of proportion with the binary (names that overlap, without NUL bytes?)", gosym.ErrCorrupted, b.maxNames)
		}
		return 0
	}
	if off+uint64(len(s))+1 > math.MaxUint32 {
		if b.err == nil {
			b.err = fmt.Errorf("gsym: string table over 4 GiB")
		}
		return 0
	}
	b.strs = append(b.strs, s...)
	b.strs = append(b.strs, 0)
	b.strOff[s] = uint32(off)
	return uint32(off)
}

// file returns the file-table index of path. A path is split at its last
// slash into a directory and a base name, as LLVM does, unless that
// leaves one of them empty. The unknown file "" gets an entry of its own
// whose base name is an empty string stored at a nonzero offset: LLVM's
// lookup drops the frame of a call site whose file entry has both
// offsets 0 (entry 0, "no file"), and rejects a line-table row in file 0.
func (b *builder) file(path string) uint32 {
	return b.fileCache.get(path, b.fileIndex)
}

// fileIndex is file without the cache.
func (b *builder) fileIndex(path string) uint32 {
	if i, ok := b.fileIdx[path]; ok {
		return i
	}
	var dir, base uint32
	switch k := strings.LastIndexByte(path, '/'); {
	case path == "":
		if b.empty == math.MaxUint32 {
			b.empty = uint32(len(b.strs))
			b.strs = append(b.strs, 0)
		}
		base = b.empty
	case k > 0 && k < len(path)-1:
		dir, base = b.str(path[:k]), b.str(path[k+1:])
	default:
		base = b.str(path)
	}
	i := uint32(len(b.files) / 2)
	b.files = append(b.files, dir, base)
	b.fileIdx[path] = i
	return i
}

// addFunction adds the FunctionInfo of f.
func (b *builder) addFunction(f gosym.Function) error {
	entry, end := f.Entry(), f.End()
	if end <= entry {
		return nil
	}
	if end-entry > math.MaxUint32 {
		return fmt.Errorf("gsym: %s: function of %d bytes", f.Name(), end-entry)
	}
	lines, err := f.Lines(b.lines)
	b.lines = lines
	if err != nil {
		return err
	}
	if len(lines) == 0 || lines[0].PCLo != entry || lines[len(lines)-1].PCHi != end {
		return fmt.Errorf("gsym: %s: lines do not cover [%#x, %#x)", f.Name(), entry, end)
	}
	calls, err := f.InlinedCalls(b.calls)
	b.calls = calls
	if err != nil {
		return err
	}
	name := b.str(f.Name())
	if name == 0 {
		// GSYM has no nameless functions (offset 0 means none).
		name = b.str("?")
	}

	// The line table: the innermost file and line, a row where they change.
	// A row without a file keeps the line before it: a frame without a
	// file has no line (Reader reports 0, llvm-gsymutil shows none), and
	// line 0 would cost bytes to go to and come back from.
	b.rows = b.rows[:0]
	for _, l := range lines {
		file, line := b.file(l.File), l.Line
		n := len(b.rows)
		if l.File == "" && n > 0 {
			line = b.rows[n-1].line
		}
		if n > 0 && b.rows[n-1].file == file && b.rows[n-1].line == line {
			continue
		}
		b.rows = append(b.rows, row{l.PCLo, file, line})
	}

	// The inline tree: each inlined call covers the ranges of its own
	// code and of the calls inlined into it.
	nc := len(calls)
	b.nodes = grow(b.nodes, nc)
	for c := range b.nodes {
		b.nodes[c].ranges = b.nodes[c].ranges[:0]
	}
	inlined := false
	for _, l := range lines {
		for c := l.Call; c >= 0; c = calls[c].Parent {
			if c >= nc || calls[c].Parent >= c {
				return fmt.Errorf("gsym: %s: range at %#x in inlined call %d of %d", f.Name(), l.PCLo, c, nc)
			}
			r := b.nodes[c].ranges
			if k := len(r) - 1; k >= 0 && r[k].hi == l.PCLo {
				r[k].hi = l.PCHi
			} else {
				b.nodes[c].ranges = append(r, pcRange{l.PCLo, l.PCHi})
			}
			inlined = true
		}
	}

	// The FunctionInfo: size, name, line table, inline tree, end.
	if b.nfis > math.MaxUint32 {
		return fmt.Errorf("gsym: function infos over 4 GiB")
	}
	b.addrs = append(b.addrs, entry)
	b.infos = append(b.infos, uint32(b.nfis))
	b.fis = b.fis[:0]
	b.u32(uint32(end - entry))
	b.u32(name)
	b.u32(infoLines)
	at := len(b.fis)
	b.u32(0)
	b.lineTable(entry)
	b.fixLength(at)
	if inlined {
		b.u32(infoInline)
		at := len(b.fis)
		b.u32(0)
		b.inlineTree(entry, end, name, calls)
		b.fixLength(at)
	}
	b.u32(infoEnd)
	b.u32(0)
	for len(b.fis)%4 != 0 {
		b.fis = append(b.fis, 0)
	}
	b.addInfo(b.fis)
	return b.err
}

// chunkSize is the size of the chunks FunctionInfos are stored in.
const chunkSize = 1 << 20

// addInfo appends p to the FunctionInfos.
func (b *builder) addInfo(p []byte) {
	b.nfis += uint64(len(p))
	for len(p) > 0 {
		if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1]) == chunkSize {
			b.chunks = append(b.chunks, make([]byte, 0, chunkSize))
		}
		last := &b.chunks[len(b.chunks)-1]
		k := min(len(p), chunkSize-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
}

// grow returns s resized to n, reusing its memory and its elements'.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		s = append(s[:cap(s)], make([]T, n-cap(s))...)
	}
	return s[:n]
}

func (b *builder) u32(v uint32) { b.fis = b.order.AppendUint32(b.fis, v) }

// fixLength stores at fis[at:] the length of the data after it.
func (b *builder) fixLength(at int) {
	b.order.PutUint32(b.fis[at:], uint32(len(b.fis)-at-4))
}

func (b *builder) uleb(v uint64) {
	for v >= 0x80 {
		b.fis = append(b.fis, byte(v)|0x80)
		v >>= 7
	}
	b.fis = append(b.fis, byte(v))
}

func (b *builder) sleb(v int64) {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			b.fis = append(b.fis, c)
			return
		}
		b.fis = append(b.fis, c|0x80)
	}
}

func ulebLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func slebLen(v int64) int {
	n := 1
	for ; v >= 64 || v < -64; v >>= 7 {
		n++
	}
	return n
}

// windowWidths are the widths of the windows of line deltas lineTable
// tries: narrow windows leave room for larger address deltas.
var windowWidths = [...]int64{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24}

// histSpan bounds the line deltas the choice of special opcodes counts.
const histSpan = 16

// lineTable encodes b.rows. Rows start at file 1, the first row's line
// and the function's entry; each row is pushed by one special opcode
// (line and address delta in one byte) where its deltas fit the window
// [minDelta, maxDelta] of line deltas, else by AdvanceLine and AdvancePC.
// The window is chosen per function, as the one of the candidates (for
// each width, the position that covers the most rows) that gives the
// fewest bytes. The window of one width that covers the most rows is
// not always the cheapest, but it is close, and the search is linear.
func (b *builder) lineTable(entry uint64) {
	rows := b.rows
	b.deltas = b.deltas[:0]
	prev := row{entry, 1, rows[0].line}
	for _, r := range rows {
		d := delta{dl: int64(r.line) - int64(prev.line), da: r.addr - prev.addr}
		d.plain = 1 + ulebLen(d.da)
		if d.dl != 0 {
			d.plain += 1 + slebLen(d.dl)
		}
		b.deltas = append(b.deltas, d)
		prev = r
	}
	h := &b.hist
	clear(h[:])
	h[histSpan]++ // the first row: line delta 0 from the entry
	for i := 1; i < len(rows); i++ {
		d := int64(rows[i].line) - int64(rows[i-1].line)
		if d >= -histSpan && d <= histSpan {
			h[d+histSpan]++
		}
	}
	bestMin, bestMax, bestCost := int64(0), int64(0), math.MaxInt
	for _, width := range windowWidths {
		lo, sum, best := int64(0), 0, -1
		for i := int64(0); i < 2*histSpan+1; i++ {
			sum += h[i]
			if i >= width {
				sum -= h[i-width]
			}
			if i >= width-1 && sum > best {
				best, lo = sum, i-width+1-histSpan
			}
		}
		if c := b.lineCost(lo, lo+width-1); c < bestCost {
			bestMin, bestMax, bestCost = lo, lo+width-1, c
		}
		if len(rows) == 1 {
			break // [0, 0] fits its only row
		}
	}
	b.sleb(bestMin)
	b.sleb(bestMax)
	b.uleb(uint64(rows[0].line))
	prev = row{entry, 1, rows[0].line}
	for _, r := range rows {
		if r.file != prev.file {
			b.fis = append(b.fis, opSetFile)
			b.uleb(uint64(r.file))
		}
		dl, da := int64(r.line)-int64(prev.line), r.addr-prev.addr
		if op, ok := special(bestMin, bestMax, dl, da); ok {
			b.fis = append(b.fis, op)
		} else {
			if dl != 0 {
				b.fis = append(b.fis, opAdvanceLine)
				b.sleb(dl)
			}
			b.fis = append(b.fis, opAdvancePC)
			b.uleb(da)
		}
		prev = r
	}
	b.fis = append(b.fis, opEnd)
}

// delta is a row's line and address deltas from the row before, and
// the bytes it takes without a special opcode.
type delta struct {
	dl    int64
	da    uint64
	plain int
}

// lineCost returns the bytes of the line table of b.deltas with the
// window [lo, hi], file changes left out (they cost the same in every
// window).
func (b *builder) lineCost(lo, hi int64) int {
	n := slebLen(lo) + slebLen(hi)
	width := hi - lo + 1
	for _, d := range b.deltas {
		if d.dl >= lo && d.dl <= hi && d.da <= 255 && d.dl-lo+int64(d.da)*width <= 255-opFirstSpec {
			n++
		} else {
			n += d.plain
		}
	}
	return n
}

// special returns the special opcode for a line delta dl and an address
// delta da with the window [lo, hi], if there is one.
func special(lo, hi, dl int64, da uint64) (byte, bool) {
	if dl < lo || dl > hi || da > 255 {
		return 0, false
	}
	op := dl - lo + int64(da)*(hi-lo+1) + opFirstSpec
	if op > 255 {
		return 0, false
	}
	return byte(op), true
}

// inlineTree encodes the inline tree of a function [entry, end) named
// name: the root (the function itself, call file 0) and, nested in it,
// the nodes of the inlined calls that have PCs, each a child of its
// parent, children in the order of calls. A node's ranges are ULEB
// offsets from the first address of its parent's first range, and sizes.
func (b *builder) inlineTree(entry, end uint64, name uint32, calls []gosym.InlinedCall) {
	nc := len(calls)
	b.child, b.next = grow(b.child, nc+1), grow(b.next, nc)
	for i := range b.child {
		b.child[i] = -1
	}
	for c := nc - 1; c >= 0; c-- {
		if len(b.nodes[c].ranges) == 0 {
			continue
		}
		p := calls[c].Parent
		if p < 0 {
			p = nc
		}
		b.next[c] = b.child[p]
		b.child[p] = int32(c)
	}
	// The root.
	b.uleb(1)
	b.uleb(0)
	b.uleb(end - entry)
	b.fis = append(b.fis, 1) // it has children
	b.u32(name)
	b.uleb(0)
	b.uleb(0)
	// The nodes, depth first, with an explicit stack: stack holds the
	// nodes whose children are being written, the root as nc.
	b.stack = append(b.stack[:0], int32(nc))
	cur := b.child[nc]
	for len(b.stack) > 0 {
		if cur < 0 {
			// The end of a list of children.
			b.uleb(0)
			p := b.stack[len(b.stack)-1]
			b.stack = b.stack[:len(b.stack)-1]
			if p < int32(nc) {
				cur = b.next[p]
			}
			continue
		}
		p := b.stack[len(b.stack)-1]
		base := entry
		if p < int32(nc) {
			base = b.nodes[p].ranges[0].lo
		}
		c := calls[cur]
		rs := b.nodes[cur].ranges
		b.uleb(uint64(len(rs)))
		for _, r := range rs {
			b.uleb(r.lo - base)
			b.uleb(r.hi - r.lo)
		}
		has := b.child[cur] >= 0
		if has {
			b.fis = append(b.fis, 1)
		} else {
			b.fis = append(b.fis, 0)
		}
		b.u32(b.str(c.Name))
		b.uleb(uint64(b.file(c.CallFile)))
		b.uleb(uint64(c.CallLine))
		if has {
			b.stack = append(b.stack, cur)
			cur = b.child[cur]
		} else {
			cur = b.next[cur]
		}
	}
}

// writeTo writes the header and the tables.
func (b *builder) writeTo(w io.Writer, uuid []byte) error {
	n := len(b.addrs)
	if uint64(n) > math.MaxUint32 {
		return fmt.Errorf("gsym: %d functions", n)
	}
	var base, span uint64
	if n > 0 {
		base, span = b.addrs[0], b.addrs[n-1]-b.addrs[0]
	}
	size := 1
	for ; size < 8 && span>>(8*size) != 0; size *= 2 {
	}
	align := func(off, a uint64) uint64 { return (off + a - 1) &^ (a - 1) }
	addrOff := align(headerSize, uint64(size))
	infoOff := align(addrOff+uint64(n*size), 4)
	fileOff := infoOff + 4*uint64(n)
	strOff := fileOff + 4 + 4*uint64(len(b.files))
	fiOff := align(strOff+uint64(len(b.strs)), 4)
	if fiOff+b.nfis > math.MaxUint32 {
		return fmt.Errorf("gsym: file over 4 GiB")
	}

	o := b.order
	out := make([]byte, 0, fiOff)
	out = o.AppendUint32(out, magic)
	out = o.AppendUint16(out, version)
	out = append(out, byte(size), byte(len(uuid)))
	out = o.AppendUint64(out, base)
	out = o.AppendUint32(out, uint32(n))
	out = o.AppendUint32(out, uint32(strOff))
	out = o.AppendUint32(out, uint32(len(b.strs)))
	out = append(out, uuid...)
	out = append(out, make([]byte, addrOff-uint64(len(out)))...)
	for _, a := range b.addrs {
		switch size {
		case 1:
			out = append(out, byte(a-base))
		case 2:
			out = o.AppendUint16(out, uint16(a-base))
		case 4:
			out = o.AppendUint32(out, uint32(a-base))
		default:
			out = o.AppendUint64(out, a-base)
		}
	}
	out = append(out, make([]byte, infoOff-uint64(len(out)))...)
	for _, off := range b.infos {
		out = o.AppendUint32(out, uint32(fiOff)+off)
	}
	out = o.AppendUint32(out, uint32(len(b.files)/2))
	for _, v := range b.files {
		out = o.AppendUint32(out, v)
	}
	if _, err := w.Write(out); err != nil {
		return err
	}
	pad := make([]byte, fiOff-strOff-uint64(len(b.strs)))
	for _, p := range append([][]byte{b.strs, pad}, b.chunks...) {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
