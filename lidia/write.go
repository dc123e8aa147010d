package lidia

import (
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/gosym-dev/gosym/gosym"
)

// Write emits the symbol table t as a Lidia file: for every function, the
// depth-0 ranges that cover it, the ranges of its inlined calls with their
// call sites, line tables and source files, unless options leave them out
// (WithLines, WithFiles, WithInlines). What the ranges mean is described in
// the package documentation. Write builds the tables in memory and then
// writes the header and the tables in order, so w need not be an
// io.Seeker. Addresses are link-time addresses, as t's.
func Write(w io.Writer, t *gosym.Table, opts ...Option) error {
	b := newBuilder(makeOptions(opts), uint64(t.Info().Quantum))
	for f, err := range t.Functions() {
		if err != nil {
			return err
		}
		if err := b.addFunction(f); err != nil {
			return err
		}
	}
	return b.writeTo(w)
}

// maxDepth bounds the inline depth Write accepts; deeper chains mean a
// cyclic inline tree.
const maxDepth = 1 << 10

// record is one range entry: its VA and its eight fields.
type record struct {
	va uint64
	f  [numFields]uint64
}

// lineEntry is one entry of a line table: an offset from the range's VA
// and the line from there on.
type lineEntry struct{ off, line uint32 }

// frame is one frame of an inline stack while building.
type frame struct {
	name, file string
	line       uint32
}

// openRange is a range being built: its record and its line entries so far.
type openRange struct {
	rec   int
	lines []lineEntry
}

// builder accumulates the tables of a file, function by function.
type builder struct {
	o       options
	quantum uint64

	recs  []record
	lines []lineEntry
	// lineTabs maps a hash of a line table to the index of the first
	// table with that hash, to share identical tables.
	lineTabs map[uint64]uint32
	strs     []byte
	strOff   map[string]uint64

	// Per-function scratch, reused.
	lr     gosym.LinesResult
	locs   []gosym.Location
	parent []int32 // segment holding ParentPC; -2: not computed yet
	chain  []frame
	cur    []frame     // the inline stack of the current piece, outermost first
	prev   []frame     // the stack of the previous piece
	open   []openRange // open[:nopen] are the ranges being built, by depth
	nopen  int
}

func newBuilder(o options, quantum uint64) *builder {
	b := &builder{
		o:        o,
		quantum:  max(quantum, 1),
		lineTabs: make(map[uint64]uint32),
		strOff:   make(map[string]uint64),
	}
	b.strs = append(b.strs, 0, 0, 0, 0) // "" at offset 0
	b.strOff[""] = 0
	return b
}

// str returns the strings-table offset of s, adding it if new.
func (b *builder) str(s string) uint64 {
	if off, ok := b.strOff[s]; ok {
		return off
	}
	off := uint64(len(b.strs))
	b.strs = le.AppendUint32(b.strs, uint32(len(s)))
	b.strs = append(b.strs, s...)
	b.strOff[s] = off
	return off
}

// addFunction adds the ranges of one physical function.
func (b *builder) addFunction(f gosym.Function) error {
	entry, end := f.Entry(), f.End()
	if end <= entry {
		return nil
	}
	lr, err := f.Lines(b.lr)
	b.lr = lr
	if err != nil {
		return err
	}
	fl := lr.FunctionLines
	if len(fl) == 0 || fl[0].PCLo != entry || fl[len(fl)-1].PCHi != end {
		return fmt.Errorf("lidia: %s: lines do not cover [%#x, %#x)", f.Name(), entry, end)
	}
	b.prev = b.prev[:0]
	b.parent = slices.Grow(b.parent[:0], len(fl))[:len(fl)]
	for i := range b.parent {
		b.parent[i] = -2
	}
	name := f.Name()
	for k := range fl {
		s := &fl[k]
		if s.Name != name && s.ParentPC == 0 && b.o.inlines {
			// Go 1.9–1.11 record call sites in the inline tree, not as
			// a PC: resolve every PC of the inlined range.
			if err := b.resolvePCs(f, s.PCLo, s.PCHi); err != nil {
				return err
			}
			continue
		}
		if err := b.segmentStack(fl, k); err != nil {
			return fmt.Errorf("lidia: %s: %w", name, err)
		}
		b.piece(s.PCLo)
	}
	b.closeFrom(0, end)
	return nil
}

// segmentStack sets b.cur to the inline stack of segment k: its own
// function, file and line, then the frames at its ParentPC.
func (b *builder) segmentStack(fl []gosym.FunctionLine, k int) error {
	b.chain = b.chain[:0]
	for j := k; ; {
		s := &fl[j]
		b.chain = append(b.chain, frame{s.Name, s.File, s.Line})
		if s.ParentPC == 0 {
			break
		}
		if len(b.chain) > maxDepth {
			return fmt.Errorf("inline stack at %#x deeper than %d", fl[k].PCLo, maxDepth)
		}
		p := b.parent[j]
		if p == -2 {
			i := sort.Search(len(fl), func(i int) bool { return fl[i].PCHi > s.ParentPC })
			if i == len(fl) || fl[i].PCLo > s.ParentPC {
				return fmt.Errorf("parent pc %#x outside the function", s.ParentPC)
			}
			p = int32(i)
			b.parent[j] = p
		}
		j = int(p)
	}
	b.setStack(b.chain)
	return nil
}

// resolvePCs adds the PCs of [lo, hi) one by one, resolving each.
func (b *builder) resolvePCs(f gosym.Function, lo, hi uint64) error {
	for pc := lo; pc < hi; pc += b.quantum {
		locs, err := f.ResolveLocations(pc, b.locs)
		b.locs = locs
		if err != nil {
			return err
		}
		b.chain = b.chain[:0]
		for _, l := range locs {
			b.chain = append(b.chain, frame{l.Function, l.File, l.Line})
		}
		b.setStack(b.chain)
		if pc > lo && slices.Equal(b.cur, b.prev) {
			continue
		}
		b.piece(pc)
	}
	return nil
}

// setStack sets b.cur from chain, innermost first, applying the options.
func (b *builder) setStack(chain []frame) {
	if !b.o.inlines {
		chain = chain[len(chain)-1:]
	}
	b.cur = b.cur[:0]
	for i := len(chain) - 1; i >= 0; i-- {
		fr := chain[i]
		if !b.o.files {
			fr.file = ""
		}
		b.cur = append(b.cur, fr)
	}
}

// piece adds the PCs from lo on (up to the next piece) with the stack
// b.cur. Ranges whose frame and call site are unchanged go on; the others
// are closed at lo and new ones start there.
func (b *builder) piece(lo uint64) {
	cur, prev := b.cur, b.prev
	last := len(cur) - 1
	// d is the first depth whose range does not go on.
	d := 0
	for d <= last && d < len(prev) {
		if cur[d].name != prev[d].name || cur[d].file != prev[d].file {
			break
		}
		if d < last && (d == len(prev)-1 || cur[d].line != prev[d].line) {
			// Frame d goes on, but calls from another line (or
			// from where there was none): a new range at d+1.
			d++
			break
		}
		d++
	}
	b.closeFrom(d, lo)
	for e := d; e <= last; e++ {
		r := record{va: lo}
		r.f[fDepth] = uint64(e)
		r.f[fFunc] = b.str(cur[e].name)
		r.f[fFile] = b.str(cur[e].file)
		if e > 0 {
			r.f[fCallFile] = b.str(cur[e-1].file)
			r.f[fCallLine] = uint64(cur[e-1].line)
		}
		b.recs = append(b.recs, r)
		if e == len(b.open) {
			b.open = append(b.open, openRange{})
		}
		b.open[e].rec = len(b.recs) - 1
		b.open[e].lines = b.open[e].lines[:0]
	}
	b.nopen = last + 1
	if b.o.lines {
		// The innermost range's line. Its table need only be right where
		// it is the innermost frame, so the first entry is at offset 0
		// and a line that resumes after deeper code needs no new entry.
		in := &b.open[last]
		line := cur[last].line
		if n := len(in.lines); n == 0 {
			in.lines = append(in.lines, lineEntry{0, line})
		} else if in.lines[n-1].line != line {
			in.lines = append(in.lines, lineEntry{uint32(lo - b.recs[in.rec].va), line})
		}
	}
	b.prev, b.cur = cur, prev
}

// closeFrom closes the open ranges at depth d and deeper at end.
func (b *builder) closeFrom(d int, end uint64) {
	for e := b.nopen - 1; e >= d; e-- {
		o := &b.open[e]
		r := &b.recs[o.rec]
		r.f[fLength] = end - r.va
		if b.o.lines {
			r.f[fLineIdx], r.f[fLineCount] = b.lineTable(o.lines)
		}
	}
	b.nopen = min(b.nopen, d)
}

// lineTable adds t to the line tables, sharing an identical earlier one,
// and returns its index and count.
func (b *builder) lineTable(t []lineEntry) (idx, count uint64) {
	if len(t) == 0 {
		return uint64(len(b.lines)), 0
	}
	h := uint64(len(t)) * 0x9e3779b97f4a7c15
	for _, e := range t {
		h = (h ^ (uint64(e.off)<<32 | uint64(e.line))) * 0xff51afd7ed558ccd
		h ^= h >> 29
	}
	if i, ok := b.lineTabs[h]; ok && int(i)+len(t) <= len(b.lines) && slices.Equal(b.lines[i:int(i)+len(t)], t) {
		return uint64(i), uint64(len(t))
	}
	idx = uint64(len(b.lines))
	if idx <= math.MaxUint32 {
		if _, ok := b.lineTabs[h]; !ok {
			b.lineTabs[h] = uint32(idx)
		}
	}
	b.lines = append(b.lines, t...)
	return idx, uint64(len(t))
}

// writeTo writes the header and the tables.
func (b *builder) writeTo(w io.Writer) error {
	if !slices.IsSortedFunc(b.recs, func(x, y record) int {
		if x.va != y.va {
			return cmpU64(x.va, y.va)
		}
		return cmpU64(x.f[fDepth], y.f[fDepth])
	}) {
		// Functions came in address order, so this does not happen;
		// sort as the format requires if it ever does.
		slices.SortStableFunc(b.recs, func(x, y record) int {
			if x.va != y.va {
				return cmpU64(x.va, y.va)
			}
			return cmpU64(x.f[fDepth], y.f[fDepth])
		})
	}
	n := uint64(len(b.recs))
	vaW, fW, lW := uint64(4), uint64(4), uint64(2)
	for i := range b.recs {
		r := &b.recs[i]
		if r.va > math.MaxUint32 {
			vaW = 8
		}
		for _, v := range r.f {
			if v > math.MaxUint32 {
				fW = 8
			}
		}
	}
	for _, e := range b.lines {
		if e.off > math.MaxUint16 || e.line > math.MaxUint16 {
			lW = 4
			break
		}
	}
	nl := uint64(len(b.lines))
	vaSize, rangeSize, lineSize := n*vaW, n*numFields*fW, nl*2*lW
	buf := make([]byte, headerSize+vaSize+rangeSize)
	tabs := buf[headerSize:]

	va := tabs[:vaSize]
	rng := tabs[vaSize:]
	for i := range b.recs {
		r := &b.recs[i]
		putN(va[uint64(i)*vaW:], vaW, r.va)
		e := rng[uint64(i)*numFields*fW:]
		for k, v := range r.f {
			putN(e[uint64(k)*fW:], fW, v)
		}
	}
	lines := make([]byte, lineSize)
	for i, e := range b.lines {
		putN(lines[uint64(i)*2*lW:], lW, uint64(e.off))
		putN(lines[uint64(i)*2*lW+lW:], lW, uint64(e.line))
	}

	h := buf[:headerSize]
	vaOff := uint64(headerSize)
	rangeOff := vaOff + vaSize
	strOff := rangeOff + rangeSize
	lineOff := strOff + uint64(len(b.strs))
	le.PutUint32(h[hMagic:], magic)
	le.PutUint32(h[hVersion:], version)
	le.PutUint64(h[hVAWidth:], vaW)
	le.PutUint64(h[hVACount:], n)
	le.PutUint64(h[hVAOffset:], vaOff)
	le.PutUint32(h[hVACRC:], crc32.Checksum(va, castagnoli))
	le.PutUint64(h[hRangeWidth:], fW)
	le.PutUint64(h[hRangeCount:], n)
	le.PutUint64(h[hRangeOffset:], rangeOff)
	le.PutUint32(h[hRangeCRC:], crc32.Checksum(rng, castagnoli))
	le.PutUint64(h[hStrSize:], uint64(len(b.strs)))
	le.PutUint64(h[hStrOffset:], strOff)
	le.PutUint32(h[hStrCRC:], crc32.Checksum(b.strs, castagnoli))
	le.PutUint64(h[hLineWidth:], lW)
	le.PutUint64(h[hLineCount:], nl)
	le.PutUint64(h[hLineOffset:], lineOff)
	le.PutUint32(h[hLineCRC:], crc32.Checksum(lines, castagnoli))

	for _, part := range [][]byte{buf, b.strs, lines} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

func cmpU64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// putN stores v little-endian in w bytes (2, 4 or 8).
func putN(b []byte, w, v uint64) {
	switch w {
	case 2:
		le.PutUint16(b, uint16(v))
	case 4:
		le.PutUint32(b, uint32(v))
	default:
		le.PutUint64(b, v)
	}
}
