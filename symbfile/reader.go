package symbfile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

// Reader looks up addresses in a symbfile: a file of ranges, of return
// pads, or of both, written here or by others (the OpenTelemetry
// profiler's symbtool). It is safe for concurrent use by several
// goroutines, Close included. The strings it returns stay valid after
// Close.
type Reader struct {
	strs      []string // every string of the file, substrings of one copy of it
	ranges    []rng
	lines     []readLine
	levels    []int32 // the segments of depth d are segs[levels[d]:levels[d+1]]
	segs      []segment
	pads      []readPad // by address
	padFrames []readFrame
	closed    atomic.Bool
}

// rng is a range as read; strings are indices in strs, -1 for none.
type rng struct {
	va, end        uint64
	fn, file       int32
	callFile       int32
	callLine       uint32
	depth          uint32
	lineLo, lineHi int32 // lines[lineLo:lineHi]
	// The segments of the next depth that start in [va, end): where the
	// one holding an address the range covers is, or just before.
	childLo, childHi int32
}

// readLine is a line table entry: the offset from the range's start
// (the running sum of the file's offsets) and the line from there on.
type readLine struct {
	off  uint64
	line uint32
}

// A segment is a piece of the address space at one depth, from start to
// the next segment's start, covered by range r (the innermost of those
// that cover it, in a file whose ranges of one depth overlap), or by none
// (r = -1).
type segment struct {
	start uint64
	r     int32
}

type readPad struct {
	va     uint64
	lo, hi int32 // padFrames[lo:hi], outermost first
}

type readFrame struct {
	fn, file int32
	line     uint32
}

// Open reads the named symbfile, which must be a regular file (or a
// symbolic link to one): others, such as devices and FIFOs, are refused at
// once with an *fs.PathError. See NewReader.
func Open(name string) (*Reader, error) {
	file, err := mmapfile.Load(name)
	if err != nil {
		return nil, err
	}
	return NewReader(file.Bytes())
}

// NewReader reads a symbfile held in data, which it copies once: the
// Reader does not keep data, and the strings it returns stay valid after
// data is gone. It decodes every message (the format has no index), in
// time linear in the file's size and a little more (sorting the ranges by
// depth and address), and keeps about 48 bytes per range and per return
// pad besides the copy. Errors wrap ErrCorrupted and say at which file
// offset the damage is.
func NewReader(data []byte) (*Reader, error) {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, corrupt("no %q magic at the start", magic)
	}
	arena := string(data)
	p := &parser{r: &Reader{}, base: unsafe.StringData(arena), data: unsafe.Slice(unsafe.StringData(arena), len(arena))}
	if err := p.parse(); err != nil {
		return nil, err
	}
	p.r.index()
	return p.r, nil
}

// parser holds the state of reading the messages in order.
type parser struct {
	r      *Reader
	base   *byte // the file copy
	data   []byte
	at     int     // the offset of the message being read, for errors
	table  []int32 // the current string table: indices in r.strs
	prevVA uint64
	haveVA bool
	offs   []uint32 // a line table's columns, reused
	nums   []uint32
	cols   [3][]uint32 // a return pad's columns, reused
}

func (p *parser) parse() error {
	data := p.data
	p.presize()
	pos := len(magic)
	for n := 0; pos < len(data); n++ {
		p.at = pos
		size, k := readVarint(data[pos:])
		if k == 0 {
			return corrupt("message at %#x: length cut off or over 64 bits", pos)
		}
		typ, k2 := readVarint(data[pos+k:])
		if k2 == 0 {
			return corrupt("message at %#x: type cut off or over 64 bits", pos)
		}
		body := pos + k + k2
		if size > maxMessage {
			return corrupt("message at %#x: %d bytes, more than %d", pos, size, maxMessage)
		}
		if size > uint64(len(data)-body) {
			return corrupt("message at %#x: %d bytes past the end of the file", pos, size-uint64(len(data)-body))
		}
		msg := data[body : body+int(size) : body+int(size)]
		pos = body + int(size)
		if n == 0 {
			if typ != mtHeader {
				return corrupt("first message, at %#x, of type %d, not a header", p.at, typ)
			}
			if err := p.fields(msg, func(field) error { return nil }); err != nil {
				return err
			}
			continue
		}
		var err error
		switch typ {
		case 0, mtHeader:
			err = p.errorf("message of type %d", typ)
		case mtRangeV1:
			err = p.rangeV1(msg)
		case mtReturnPadV1:
			err = p.returnPadV1(msg)
		case mtStringTable:
			err = p.stringTable(msg)
		default:
			// A message of a later version: skipped, as the
			// OpenTelemetry reader does.
		}
		if err != nil {
			return err
		}
	}
	if pos == len(magic) {
		return corrupt("no header after the magic")
	}
	return nil
}

// presize counts the ranges and return pads of the file, and the bytes of
// their messages, reading only the messages' prefixes, to allocate the
// Reader's tables once: each count is one of messages present, so the
// memory is in proportion with the file. Damage is left to parse.
func (p *parser) presize() {
	data := p.data
	var ranges, pads, rangeBytes, padBytes int
	for pos := len(magic); pos < len(data); {
		size, k := readVarint(data[pos:])
		typ, k2 := readVarint(data[pos+k:])
		if k == 0 || k2 == 0 || size > uint64(len(data)-pos-k-k2) {
			break
		}
		switch typ {
		case mtRangeV1:
			ranges++
			rangeBytes += int(size)
		case mtReturnPadV1:
			pads++
			padBytes += int(size)
		}
		pos += k + k2 + int(size)
	}
	r := p.r
	r.ranges = make([]rng, 0, ranges)
	// A line entry takes 2 bytes at least; most ranges have 1 or 2.
	r.lines = make([]readLine, 0, min(rangeBytes/2, 2*ranges))
	r.pads = make([]readPad, 0, pads)
	r.padFrames = make([]readFrame, 0, min(padBytes/3, 3*pads))
}

func (p *parser) errorf(format string, args ...any) error {
	return corrupt("message at %#x: %s", p.at, fmt.Sprintf(format, args...))
}

// fields calls fn with each field of msg.
func (p *parser) fields(msg []byte, fn func(field) error) error {
	for len(msg) > 0 {
		f, rest, ok := nextField(msg)
		if !ok {
			return p.errorf("damaged field at %#x", p.offset(msg))
		}
		if err := fn(f); err != nil {
			return err
		}
		msg = rest
	}
	return nil
}

// offset returns the file offset of b, a slice of the file.
func (p *parser) offset(b []byte) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(p.base)))
}

// inPlace adds a string written in place.
func (p *parser) inPlace(b []byte) int32 {
	p.r.strs = append(p.r.strs, unsafe.String(unsafe.SliceData(b), len(b)))
	return int32(len(p.r.strs) - 1)
}

// ref returns the string of table index v.
func (p *parser) ref(v uint64, what string) (int32, error) {
	if v >= uint64(len(p.table)) {
		return 0, p.errorf("%s refers to string %d of a table of %d", what, v, len(p.table))
	}
	return p.table[v], nil
}

// want checks the wire type of a field.
func (p *parser) want(f field, wire int, what string) error {
	if f.wire != wire {
		return p.errorf("%s (field %d) of wire type %d, not %d", what, f.num, f.wire, wire)
	}
	return nil
}

func (p *parser) stringTable(msg []byte) error {
	p.table = p.table[:0]
	return p.fields(msg, func(f field) error {
		if f.num != stStrings {
			return nil
		}
		if err := p.want(f, wireLen, "string"); err != nil {
			return err
		}
		p.table = append(p.table, p.inPlace(f.b))
		return nil
	})
}

// va sets the address of a record from its field: relative to the last
// record's, or absolute.
func (p *parser) va(f field, relative bool) (uint64, error) {
	if err := p.want(f, wireVarint, "address"); err != nil {
		return 0, err
	}
	if !relative {
		return f.v, nil
	}
	if !p.haveVA {
		return 0, p.errorf("relative address without an absolute one before it")
	}
	return p.prevVA + uint64(unzigzag(f.v)), nil
}

func (p *parser) rangeV1(msg []byte) error {
	rg := rng{fn: -1, file: -1, callFile: -1}
	var va uint64
	haveVA := false
	p.offs, p.nums = p.offs[:0], p.nums[:0]
	var length uint64
	err := p.fields(msg, func(f field) error {
		var err error
		switch f.num {
		case rDeltaVA, rSetVA:
			va, err = p.va(f, f.num == rDeltaVA)
			haveVA = true
		case rLength:
			if err = p.want(f, wireVarint, "length"); err == nil {
				length = f.v
			}
		case rFuncStr, rFileStr, rCallFileStr:
			if err = p.want(f, wireLen, "string"); err == nil {
				*rg.strField(f.num) = p.inPlace(f.b)
			}
		case rFuncRef, rFileRef, rCallFileRef:
			if err = p.want(f, wireVarint, "string reference"); err == nil {
				*rg.strField(f.num), err = p.ref(f.v, "range")
			}
		case rCallLine:
			if err = p.want(f, wireVarint, "call line"); err == nil {
				rg.callLine = uint32(f.v)
			}
		case rDepth:
			if err = p.want(f, wireVarint, "depth"); err == nil {
				rg.depth = uint32(f.v)
			}
		case rLineTable:
			if err = p.want(f, wireLen, "line table"); err == nil {
				err = p.fields(f.b, func(g field) error {
					var ok bool
					switch g.num {
					case ltOffset:
						ok = eachUint32(g, func(v uint32) { p.offs = append(p.offs, v) })
					case ltLine:
						ok = eachUint32(g, func(v uint32) { p.nums = append(p.nums, v) })
					default:
						return nil
					}
					if !ok {
						return p.errorf("damaged line table column")
					}
					return nil
				})
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if !haveVA {
		return p.errorf("range without an address")
	}
	if rg.fn < 0 {
		return p.errorf("range without a function")
	}
	if len(p.offs) != len(p.nums) {
		return p.errorf("line table of %d offsets and %d lines", len(p.offs), len(p.nums))
	}
	p.prevVA, p.haveVA = va, true
	rg.va = va
	rg.end = va + length
	if rg.end < va {
		rg.end = math.MaxUint64
	}
	r := p.r
	rg.lineLo = int32(len(r.lines))
	off := uint64(0)
	for i, o := range p.offs {
		off += uint64(o)
		r.lines = append(r.lines, readLine{off, p.nums[i]})
	}
	rg.lineHi = int32(len(r.lines))
	if len(r.ranges) == math.MaxInt32 || len(r.lines) > math.MaxInt32 || len(r.strs) > math.MaxInt32 {
		return p.errorf("more than 2^31 records")
	}
	r.ranges = append(r.ranges, rg)
	return nil
}

// strField returns the string field of rg that field number num sets.
func (rg *rng) strField(num uint64) *int32 {
	switch num {
	case rFuncStr, rFuncRef:
		return &rg.fn
	case rFileStr, rFileRef:
		return &rg.file
	}
	return &rg.callFile
}

func (p *parser) returnPadV1(msg []byte) error {
	var va uint64
	haveVA := false
	for i := range p.cols {
		p.cols[i] = p.cols[i][:0]
	}
	err := p.fields(msg, func(f field) error {
		switch f.num {
		case pDeltaVA, pSetVA:
			var err error
			va, err = p.va(f, f.num == pDeltaVA)
			haveVA = true
			return err
		case pFunc, pFile, pLine:
			c := &p.cols[f.num-pFunc]
			if !eachUint32(f, func(v uint32) { *c = append(*c, v) }) {
				return p.errorf("damaged return pad column %d", f.num)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !haveVA {
		return p.errorf("return pad without an address")
	}
	fns, files, lines := p.cols[0], p.cols[1], p.cols[2]
	if len(fns) != len(files) || len(fns) != len(lines) {
		return p.errorf("return pad of %d functions, %d files and %d lines", len(fns), len(files), len(lines))
	}
	p.prevVA, p.haveVA = va, true
	r := p.r
	lo := int32(len(r.padFrames))
	for i := range fns {
		fn, err := p.ref(uint64(fns[i]), "return pad")
		if err != nil {
			return err
		}
		file, err := p.ref(uint64(files[i]), "return pad")
		if err != nil {
			return err
		}
		r.padFrames = append(r.padFrames, readFrame{fn, file, lines[i]})
	}
	if len(r.pads) == math.MaxInt32 || len(r.padFrames) > math.MaxInt32 {
		return p.errorf("more than 2^31 records")
	}
	r.pads = append(r.pads, readPad{va, lo, int32(len(r.padFrames))})
	return nil
}

// index sorts the ranges by depth and address and cuts the address space
// of each depth into segments; sorts the return pads by address. Depths
// after the first that has no range are left out: no lookup reaches
// them.
func (r *Reader) index() {
	slices.SortStableFunc(r.ranges, func(a, b rng) int {
		if c := cmp.Compare(a.depth, b.depth); c != 0 {
			return c
		}
		if c := cmp.Compare(a.va, b.va); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end)
	})
	slices.SortStableFunc(r.pads, func(a, b readPad) int { return cmp.Compare(a.va, b.va) })
	var stack []int32
	// A level has at most twice as many segments as ranges, and one
	// more.
	r.segs = make([]segment, 0, 2*len(r.ranges)+1)
	i := 0
	for depth := uint32(0); i < len(r.ranges) && r.ranges[i].depth == depth; depth++ {
		lo := len(r.segs)
		r.levels = append(r.levels, int32(lo))
		// emit starts a segment of range k at start: replacing a
		// segment that starts there too, merging with one of k.
		emit := func(start uint64, k int32) {
			n := len(r.segs)
			if n > lo && r.segs[n-1].start == start {
				r.segs = r.segs[:n-1]
				n--
			}
			if n > lo && r.segs[n-1].r == k {
				return
			}
			r.segs = append(r.segs, segment{start, k})
		}
		// popTo ends the ranges on the stack that end at or before x;
		// after each, the one under it (that has not ended) resumes.
		popTo := func(x uint64) {
			for len(stack) > 0 {
				e := r.ranges[stack[len(stack)-1]].end
				if e > x {
					return
				}
				for len(stack) > 0 && r.ranges[stack[len(stack)-1]].end <= e {
					stack = stack[:len(stack)-1]
				}
				if len(stack) > 0 {
					emit(e, stack[len(stack)-1])
				} else {
					emit(e, -1)
				}
			}
		}
		stack = stack[:0]
		for ; i < len(r.ranges) && r.ranges[i].depth == depth; i++ {
			rg := &r.ranges[i]
			if rg.end <= rg.va {
				continue
			}
			popTo(rg.va)
			emit(rg.va, int32(i))
			stack = append(stack, int32(i))
		}
		popTo(math.MaxUint64)
	}
	r.levels = append(r.levels, int32(len(r.segs)))
	// Each range's window of the next depth's segments: those that start
	// in [va, end). The ranges are sorted by depth.
	d, base := uint32(0), int32(0)
	var next []segment
	for k := range r.ranges {
		rg := &r.ranges[k]
		if int(rg.depth)+2 >= len(r.levels) {
			break // the last depth read, or deeper
		}
		if k == 0 || rg.depth != d {
			d = rg.depth
			base = r.levels[d+1]
			next = r.segs[base:r.levels[d+2]]
		}
		lo, _ := slices.BinarySearchFunc(next, rg.va, compareStart)
		hi, _ := slices.BinarySearchFunc(next, rg.end, compareStart)
		rg.childLo, rg.childHi = base+int32(lo), base+int32(hi)
	}
}

func compareStart(s segment, a uint64) int { return cmp.Compare(s.start, a) }

// find returns the range that covers addr of the segments of one depth,
// r.segs[first:end], or -1, searching only r.segs[lo:hi], where the last
// segment that starts at or before addr is known to be, or just before.
func (r *Reader) find(first, lo, hi int32, addr uint64) int32 {
	i, j := lo, hi
	for i < j {
		m := int32(uint32(i+j) >> 1)
		if r.segs[m].start <= addr {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == first {
		return -1
	}
	return r.segs[i-1].r
}

func (r *Reader) str(i int32) string {
	if i < 0 {
		return ""
	}
	return r.strs[i]
}

// Close marks the Reader closed: Lookup after Close returns ErrClosed.
// Strings returned earlier stay valid. A second Close does nothing and
// returns nil.
func (r *Reader) Close() error {
	r.closed.Store(true)
	return nil
}

// NumRanges returns the number of ranges in the file.
func (r *Reader) NumRanges() int { return len(r.ranges) }

// NumReturnPads returns the number of return pads in the file.
func (r *Reader) NumReturnPads() int { return len(r.pads) }

// Lookup appends to buf[:0] the frames at addr, innermost inlined call
// first and the physical function last, each with its function, file and
// line (StartLine and Wrapper, which symbfiles do not record, are zero).
// For a file written by Write, that is what gosym's
// Table.ResolveLocations returns for the binary. Lookup allocates nothing
// when buf has room for the frames.
//
// The frames are read from the ranges as the format defines them (the
// package documentation, "Reading"): the range of each depth that covers
// addr, from depth 0 on, up to the first depth with none. An address that
// no range covers is looked up among the return pads (which are at the
// address after a call minus 1). An address that neither covers gives no
// frame and an error wrapping gosym.ErrPCNotFound.
func (r *Reader) Lookup(addr uint64, buf []gosym.Location) ([]gosym.Location, error) {
	buf = buf[:0]
	if r.closed.Load() {
		return buf, ErrClosed
	}
	last := int32(-1)
	for d := 0; d+1 < len(r.levels); d++ {
		first, lo, hi := r.levels[d], r.levels[d], r.levels[d+1]
		if last >= 0 {
			lo, hi = r.ranges[last].childLo, r.ranges[last].childHi
		}
		k := r.find(first, lo, hi, addr)
		if k < 0 {
			break
		}
		rg := &r.ranges[k]
		if last >= 0 {
			// The caller's frame is at the call site.
			out := &buf[len(buf)-1]
			out.Line = rg.callLine
			if rg.callFile >= 0 {
				out.File = r.strs[rg.callFile]
			}
		}
		buf = append(buf, gosym.Location{Function: r.strs[rg.fn], File: r.str(rg.file)})
		last = k
	}
	if last >= 0 {
		buf[len(buf)-1].Line = r.line(&r.ranges[last], addr)
		slices.Reverse(buf)
		return buf, nil
	}
	i, found := slices.BinarySearchFunc(r.pads, addr, func(p readPad, a uint64) int { return cmp.Compare(p.va, a) })
	if !found {
		return buf, errNotFound
	}
	p := &r.pads[i]
	for j := p.hi - 1; j >= p.lo; j-- {
		fr := &r.padFrames[j]
		buf = append(buf, gosym.Location{Function: r.strs[fr.fn], File: r.strs[fr.file], Line: fr.line})
	}
	return buf, nil
}

// line returns the line at addr in range rg: that of the last entry of its
// line table at or before addr; 0 if none.
func (r *Reader) line(rg *rng, addr uint64) uint32 {
	lines := r.lines[rg.lineLo:rg.lineHi]
	rel := addr - rg.va
	i, j := 0, len(lines)
	for i < j {
		m := int(uint(i+j) >> 1)
		if lines[m].off <= rel {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == 0 {
		return 0
	}
	return lines[i-1].line
}
