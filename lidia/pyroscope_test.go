package lidia

// A re-implementation, for tests, of Pyroscope's lidia reader and writer,
// written from a description of the format and of Pyroscope's reader (the
// package doc), not from Pyroscope's code: the reader
// is the design our Reader is compared with (ReaderAt probes, a string copy
// per name), and the writer makes files in the upstream layout.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sort"
)

// pyroFrame is Pyroscope's SourceInfoFrame.
type pyroFrame struct {
	LineNumber   uint64
	FunctionName string
	FilePath     string
}

// pyroTable is Pyroscope's Table: the VA table in memory, everything else
// read through an io.ReaderAt.
type pyroTable struct {
	r                      io.ReaderAt
	va                     []uint64
	fieldSize              uint64
	rangeOff, strOff       uint64
	fieldsBuffer           []byte
	strSize, lineFieldSize uint64
	walked                 int // ranges the last Lookup read
}

var errPyro = errors.New("pyroscope: bad file")

// openPyro is Pyroscope's OpenReader: it checks magic, version, the
// VA and range widths and that the counts agree, loads the VA table, and
// with crc verifies the checksums in the order VA, strings, range, lines.
func openPyro(r io.ReaderAt, crc bool) (*pyroTable, error) {
	h := make([]byte, headerSize)
	r.ReadAt(h, 0) // the byte count is not checked
	le := binary.LittleEndian
	if le.Uint32(h) != magic || le.Uint32(h[4:]) != version {
		return nil, errPyro
	}
	vaW, fW := le.Uint64(h[hVAWidth:]), le.Uint64(h[hRangeWidth:])
	n := le.Uint64(h[hVACount:])
	if (vaW != 4 && vaW != 8) || (fW != 4 && fW != 8) || n != le.Uint64(h[hRangeCount:]) {
		return nil, errPyro
	}
	t := &pyroTable{
		r:             r,
		fieldSize:     fW,
		rangeOff:      le.Uint64(h[hRangeOffset:]),
		strOff:        le.Uint64(h[hStrOffset:]),
		strSize:       le.Uint64(h[hStrSize:]),
		lineFieldSize: le.Uint64(h[hLineWidth:]),
		fieldsBuffer:  make([]byte, 8*fW),
	}
	vab := make([]byte, n*vaW)
	if _, err := r.ReadAt(vab, int64(le.Uint64(h[hVAOffset:]))); err != nil && n > 0 {
		return nil, err
	}
	t.va = make([]uint64, n)
	for i := range t.va {
		if vaW == 4 {
			t.va[i] = uint64(le.Uint32(vab[4*i:]))
		} else {
			t.va[i] = le.Uint64(vab[8*i:])
		}
	}
	if crc {
		for _, c := range []struct{ off, size, crc uint64 }{
			{le.Uint64(h[hVAOffset:]), n * vaW, hVACRC},
			{t.strOff, t.strSize, hStrCRC},
			{t.rangeOff, n * 8 * fW, hRangeCRC},
			{le.Uint64(h[hLineOffset:]), le.Uint64(h[hLineCount:]) * 2 * t.lineFieldSize, hLineCRC},
		} {
			b := make([]byte, c.size)
			if _, err := r.ReadAt(b, int64(c.off)); err != nil && c.size > 0 {
				return nil, err
			}
			if crc32.Checksum(b, castagnoli) != le.Uint32(h[c.crc:]) {
				return nil, errPyro
			}
		}
	}
	return t, nil
}

// entry reads range entry i with one ReadAt into the shared buffer.
func (t *pyroTable) entry(i int) (length, depth, fn, file uint64) {
	b := t.fieldsBuffer
	t.r.ReadAt(b, int64(t.rangeOff+uint64(i)*8*t.fieldSize))
	f := func(k int) uint64 {
		if t.fieldSize == 4 {
			return uint64(binary.LittleEndian.Uint32(b[4*k:]))
		}
		return binary.LittleEndian.Uint64(b[8*k:])
	}
	return f(0), f(1), f(2), f(3)
}

// str reads a string: "" for offset 0, else its length, then a copy of its
// bytes.
func (t *pyroTable) str(off uint64) string {
	if off == 0 {
		return ""
	}
	n := t.fieldsBuffer[:4]
	if _, err := t.r.ReadAt(n, int64(t.strOff+off)); err != nil {
		return ""
	}
	b := make([]byte, binary.LittleEndian.Uint32(n))
	if k, err := t.r.ReadAt(b, int64(t.strOff+off+4)); err != nil && !(err == io.EOF && k > 0) {
		return ""
	}
	return string(b)
}

// Lookup is Pyroscope's walk: from the last VA at or before addr,
// backward, a frame for every range that covers addr (its own function and
// file, line 0), stopping after the first range of depth 0.
func (t *pyroTable) Lookup(dst []pyroFrame, addr uint64) []pyroFrame {
	dst = dst[:0]
	idx := sort.Search(len(t.va), func(i int) bool { return t.va[i] > addr }) - 1
	t.walked = 0
	for ; idx >= 0; idx-- {
		t.walked++
		length, depth, fn, file := t.entry(idx)
		if t.va[idx] <= addr && addr < t.va[idx]+length {
			dst = append(dst, pyroFrame{FunctionName: t.str(fn), FilePath: t.str(file)})
		}
		if depth == 0 {
			break
		}
	}
	return dst
}

// pyroRange is Pyroscope's Range, the builder's input.
type pyroRange struct {
	VA       uint64
	Length   uint32
	Depth    uint32
	Function string
	File     string
	CallFile string
	CallLine uint32
	Lines    []lineEntry
}

// writePyro builds a file as Pyroscope's builder does: strings
// deduplicated after "" and "[overflow]", ranges sorted stably by (VA,
// depth), one line table per range appended in order, widths chosen
// without looking at callFile and callLine, every CRC written.
func writePyro(ranges []pyroRange, withLines, withFiles bool) []byte {
	strs := []byte{0, 0, 0, 0}
	offs := map[string]uint64{"": 0}
	str := func(s string) uint64 {
		if off, ok := offs[s]; ok {
			return off
		}
		off := uint64(len(strs))
		strs = binary.LittleEndian.AppendUint32(strs, uint32(len(s)))
		strs = append(strs, s...)
		offs[s] = off
		return off
	}
	str("[overflow]")
	rs := slices.Clone(ranges)
	slices.SortStableFunc(rs, func(a, b pyroRange) int {
		return cmp.Or(cmp.Compare(a.VA, b.VA), cmp.Compare(a.Depth, b.Depth))
	})
	type entry struct {
		va uint64
		f  [8]uint64
	}
	var es []entry
	var lines []lineEntry
	for _, r := range rs {
		e := entry{va: r.VA}
		e.f[fLength], e.f[fDepth] = uint64(r.Length), uint64(r.Depth)
		e.f[fFunc] = str(r.Function)
		if withFiles {
			e.f[fFile], e.f[fCallFile] = str(r.File), str(r.CallFile)
		}
		e.f[fCallLine] = uint64(r.CallLine)
		if withLines {
			e.f[fLineIdx], e.f[fLineCount] = uint64(len(lines)), uint64(len(r.Lines))
			lines = append(lines, r.Lines...)
		}
		es = append(es, e)
	}
	vaW, fW, lW := uint64(4), uint64(4), uint64(2)
	for _, e := range es {
		if e.va > math.MaxUint32 {
			vaW = 8
		}
		for _, k := range []int{fLength, fDepth, fFunc, fFile, fLineIdx, fLineCount} {
			if e.f[k] > math.MaxUint32 {
				fW = 8
			}
		}
	}
	for _, l := range lines {
		if l.off > math.MaxUint16 || l.line > math.MaxUint16 {
			lW = 4
		}
	}
	var va, rng, ln []byte
	for _, e := range es {
		va = appendN(va, vaW, e.va)
		for _, v := range e.f {
			rng = appendN(rng, fW, v)
		}
	}
	for _, l := range lines {
		ln = appendN(ln, lW, uint64(l.off))
		ln = appendN(ln, lW, uint64(l.line))
	}
	h := make([]byte, headerSize)
	le := binary.LittleEndian
	n := uint64(len(es))
	le.PutUint32(h, magic)
	le.PutUint32(h[4:], version)
	le.PutUint64(h[hVAWidth:], vaW)
	le.PutUint64(h[hVACount:], n)
	le.PutUint64(h[hVAOffset:], headerSize)
	le.PutUint32(h[hVACRC:], crc32.Checksum(va, castagnoli))
	le.PutUint64(h[hRangeWidth:], fW)
	le.PutUint64(h[hRangeCount:], n)
	le.PutUint64(h[hRangeOffset:], headerSize+uint64(len(va)))
	le.PutUint32(h[hRangeCRC:], crc32.Checksum(rng, castagnoli))
	le.PutUint64(h[hStrSize:], uint64(len(strs)))
	le.PutUint64(h[hStrOffset:], headerSize+uint64(len(va)+len(rng)))
	le.PutUint32(h[hStrCRC:], crc32.Checksum(strs, castagnoli))
	le.PutUint64(h[hLineWidth:], lW)
	le.PutUint64(h[hLineCount:], uint64(len(lines)))
	le.PutUint64(h[hLineOffset:], headerSize+uint64(len(va)+len(rng)+len(strs)))
	le.PutUint32(h[hLineCRC:], crc32.Checksum(ln, castagnoli))
	return slices.Concat(h, va, rng, strs, ln)
}

func appendN(b []byte, w, v uint64) []byte {
	switch w {
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(b, v)
}
