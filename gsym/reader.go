package gsym

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

// maxDepth bounds the nesting of an inline tree Lookup follows; a deeper
// tree is reported as corrupt (Go's inliner nests a few levels; LLVM's
// files from C++ some dozens).
const maxDepth = 1024

// Reader looks up addresses in a GSYM file of any origin: written by
// Write, by llvm-gsymutil or by LLVM's GsymCreator, in either byte order.
// It is safe for concurrent use by several goroutines, Close included.
// The strings it returns stay valid after Close.
type Reader struct {
	data   []byte         // the whole file: a mapping, or the caller's bytes
	mapped *mmapfile.Data // holds data for a Reader made by Open; nil otherwise
	o      binary.ByteOrder

	base     uint64
	n        int    // number of addresses
	addrSize int    // 1, 2, 4 or 8
	addrs    []byte // address offsets from base, sorted
	addrOnce sync.Once
	addrTab  []uint64 // the addresses, decoded on first use
	// The buckets of the addresses' offsets from base: the search for a
	// function reads only the addresses of one bucket.
	addrIdx bucketIndex
	// The file index (flat.go), built on the first lookup; nil: none.
	fileOnce sync.Once
	fileIdx  *fileIndex
	infos    []byte // the offset in data of each FunctionInfo, 4 bytes each
	nfiles   int
	files    []byte // directory and base name offsets, 8 bytes per file
	strs     []byte // the string table, copied to the heap
	uuid     []byte

	// paths[i] is the path of file i, joined from its directory and base
	// name on first use (most files have both).
	paths []atomic.Pointer[string]
	// idx[i] is the index of FunctionInfo i, made on its first lookup
	// (index.go).
	idx       []atomic.Pointer[funcIndex]
	pathBytes atomic.Int64 // bytes of the paths remembered, or tried

	closed atomic.Bool
}

// Open opens the named GSYM file, which must be a regular file (or a
// symbolic link to one): others, such as devices and FIFOs, are refused at
// once with an *fs.PathError. The file is mapped read-only where the
// operating system allows (Unix), else read into memory; the memory is
// released once the Reader is unreachable, not by Close.
func Open(name string) (*Reader, error) {
	file, err := mmapfile.Load(name)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(file.Bytes())
	if err != nil {
		return nil, err
	}
	r.mapped = file
	return r, nil
}

// NewReader reads a GSYM file held in data, which must not be modified
// while the Reader is in use: the address table and the FunctionInfos are
// read in place. The string table is copied, so the strings Lookup
// returns stay valid after data is gone. NewReader checks the header and
// that the address, address-info and file tables and the string table
// lie in data; it does no work per function. What a FunctionInfo holds
// is checked by Lookup, where it is read (the first Lookup indexes the
// file).
func NewReader(data []byte) (*Reader, error) {
	if len(data) < headerSize {
		return nil, corrupt("file of %d bytes has no header", len(data))
	}
	o := order(data)
	if o == nil {
		return nil, corrupt("bad magic %#x", binary.LittleEndian.Uint32(data))
	}
	h := data[:headerSize]
	if v := o.Uint16(h[hVersion:]); v != version {
		return nil, corrupt("unsupported version %d", v)
	}
	r := &Reader{data: data, o: o, base: o.Uint64(h[hBase:]), addrSize: int(h[hAddrSize])}
	switch r.addrSize {
	case 1, 2, 4, 8:
	default:
		return nil, corrupt("address offset size %d", r.addrSize)
	}
	if u := int(h[hUUIDSize]); u > maxUUID {
		return nil, corrupt("UUID of %d bytes", u)
	} else {
		r.uuid = bytes.Clone(h[hUUID : hUUID+u])
	}
	n := uint64(o.Uint32(h[hNumAddrs:]))
	end := uint64(len(data))
	off := alignUp(headerSize, uint64(r.addrSize))
	if off > end || n > (end-off)/uint64(r.addrSize) {
		return nil, corrupt("address table (%d×%d bytes at %#x) outside the file of %d bytes", n, r.addrSize, off, end)
	}
	r.addrs = data[off : off+n*uint64(r.addrSize)]
	off = alignUp(off+n*uint64(r.addrSize), 4)
	if off > end || n > (end-off)/4 {
		return nil, corrupt("address info table (%d×4 bytes at %#x) outside the file of %d bytes", n, off, end)
	}
	r.infos = data[off : off+4*n]
	off += 4 * n
	if end-off < 4 {
		return nil, corrupt("file table at %#x outside the file of %d bytes", off, end)
	}
	nf := uint64(o.Uint32(data[off:]))
	off += 4
	if nf > (end-off)/8 {
		return nil, corrupt("file table (%d×8 bytes at %#x) outside the file of %d bytes", nf, off, end)
	}
	r.files = data[off : off+8*nf]
	so, ss := uint64(o.Uint32(h[hStrOff:])), uint64(o.Uint32(h[hStrSize:]))
	if so > end || ss > end-so {
		return nil, corrupt("string table (%d bytes at %#x) outside the file of %d bytes", ss, so, end)
	}
	r.strs = bytes.Clone(data[so : so+ss])
	r.n, r.nfiles = int(n), int(nf)
	r.paths = make([]atomic.Pointer[string], nf)
	r.idx = make([]atomic.Pointer[funcIndex], n)
	return r, nil
}

func alignUp(off, a uint64) uint64 { return (off + a - 1) &^ (a - 1) }

// Close marks the Reader closed: Lookup after Close returns ErrClosed.
// Strings returned earlier stay valid. Close releases nothing itself: the
// memory of a Reader made by Open is released once the Reader is
// unreachable, so a Lookup running while Close is called completes
// normally. A second Close does nothing and returns nil.
func (r *Reader) Close() error {
	r.closed.Store(true)
	return nil
}

// NumAddresses returns the number of FunctionInfos in the file.
func (r *Reader) NumAddresses() int { return r.n }

// UUID returns the file's UUID (for files written by Write, the binary's
// GNU build ID), or nil.
func (r *Reader) UUID() []byte { return r.uuid }

// addresses returns the address table decoded, decoding it on first use.
func (r *Reader) addresses() []uint64 {
	r.addrOnce.Do(func() {
		a := make([]uint64, r.n)
		for i := range a {
			a[i] = r.addr(i)
		}
		r.addrTab = a
		r.addrIdx = newBucketIndex(len(a), func(i int) uint64 { return a[i] - r.base })
	})
	return r.addrTab
}

// addr returns address i.
func (r *Reader) addr(i int) uint64 {
	switch r.addrSize {
	case 1:
		return r.base + uint64(r.addrs[i])
	case 2:
		return r.base + uint64(r.o.Uint16(r.addrs[2*i:]))
	case 4:
		return r.base + uint64(r.o.Uint32(r.addrs[4*i:]))
	}
	return r.base + r.o.Uint64(r.addrs[8*i:])
}

// Lookup appends to buf[:0] the frames at addr, innermost inlined call
// first and the function last, each with its function, file and line, as
// llvm-gsymutil's lookup reports them: for a file written by Write, what
// gosym's Table.ResolveLocations returns for the binary (StartLine and
// Wrapper, which GSYM does not record, are zero). An address that no
// FunctionInfo covers gives an error wrapping gosym.ErrPCNotFound; a
// FunctionInfo that cannot be read, or a line table without a row (in a
// file) at addr, gives one wrapping ErrCorrupted, where llvm-gsymutil
// reports an error too. A frame without a file has line 0
// (llvm-gsymutil prints no line for it). Lookup allocates nothing once
// warm, when buf has room for the frames.
//
// The first Lookup indexes the whole file (flat.go): it decodes every
// FunctionInfo once into a table of the address space, with memory and
// work bounded by the file's size (for the go command's file of 3.3 MB,
// 50–80 ms of CPU and 19 MB allocated, of which 8 MB stay); later lookups
// read only that table. Addresses the index cannot answer (several
// functions at one address, a FunctionInfo that does not decode soundly,
// an address table out of order, beyond a bound) are looked up in the
// FunctionInfos, each indexed on its first lookup there.
//
// Ranges of an inline tree are read as stored, the first of each node
// being the base of its children's offsets; LLVM's writers store them
// sorted and disjoint.
func (r *Reader) Lookup(addr uint64, buf []gosym.Location) ([]gosym.Location, error) {
	buf = buf[:0]
	if r.closed.Load() {
		return buf, ErrClosed
	}
	if r.n == 0 || addr < r.base {
		return buf, errNotFound
	}
	if g := r.fileIndex(); g != nil && addr-r.base < g.span {
		if out, found, ok := g.lookup(buf, addr-r.base); ok {
			if !found {
				return out, errNotFound
			}
			return out, nil
		}
	}
	return r.lookupInfos(buf, addr, true)
}

// lookupInfos is Lookup without the file index: it searches the address
// table, and reads the FunctionInfo, or, if indexed is true, its function
// index.
func (r *Reader) lookupInfos(buf []gosym.Location, addr uint64, indexed bool) ([]gosym.Location, error) {
	// The last address at or below addr, and the first with the same
	// value; then the first of those whose size covers addr (size 0: any).
	addrs := r.addresses()
	lo, hi := r.addrIdx.bounds(addr - r.base)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if addrs[m] <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return buf, errNotFound
	}
	i := lo - 1
	start := addrs[i]
	for i > 0 && addrs[i-1] == start {
		i--
	}
	for ; i < r.n && addrs[i] == start; i++ {
		if x := r.idx[i].Load(); indexed && x != nil && x != noIndex && x.size != 0 && addr-start < uint64(x.size) {
			// Indexed, and covering addr: the FunctionInfo need not be
			// read.
			if out, ok := r.lookupIndexed(x, buf, addr); ok {
				return out, nil
			}
		}
		fi, err := r.info(i)
		if err != nil {
			return buf, err
		}
		if size := uint64(r.o.Uint32(fi)); size == 0 || addr-start < size {
			if !indexed {
				return r.lookupInfo(buf, fi, start, addr)
			}
			if x := r.index(i, fi, start); x != noIndex {
				if out, ok := r.lookupIndexed(x, buf, addr); ok {
					return out, nil
				}
			}
			return r.lookupInfo(buf[:0], fi, start, addr)
		}
	}
	return buf, errNotFound
}

// info returns the data of FunctionInfo i: from its offset to the end of
// the file, at least 8 bytes.
func (r *Reader) info(i int) ([]byte, error) {
	off := uint64(r.o.Uint32(r.infos[4*i:]))
	if off > uint64(len(r.data)) || uint64(len(r.data))-off < 8 {
		return nil, corrupt("FunctionInfo %d at %#x outside the file of %d bytes", i, off, len(r.data))
	}
	return r.data[off:], nil
}

// lookupInfo looks addr up in the FunctionInfo fi of the function at
// start.
func (r *Reader) lookupInfo(buf []gosym.Location, fi []byte, start, addr uint64) ([]gosym.Location, error) {
	name := r.o.Uint32(fi[4:])
	if name == 0 {
		return buf, corrupt("function at %#x has name offset 0", start)
	}
	fname := r.str(name)
	var (
		lineData, inlineData []byte
		hasLines             bool
	)
	p := fi[8:]
	for {
		if len(p) < 8 {
			return buf, corrupt("function %s at %#x: FunctionInfo truncated", fname, start)
		}
		typ, n := r.o.Uint32(p), uint64(r.o.Uint32(p[4:]))
		p = p[8:]
		if n > uint64(len(p)) {
			return buf, corrupt("function %s at %#x: data of type %d (%d bytes) truncated", fname, start, typ, n)
		}
		switch typ {
		case infoLines:
			lineData, hasLines = p[:n], true
		case infoInline:
			inlineData = p[:n]
		}
		p = p[n:]
		if typ == infoEnd {
			break
		}
	}
	if !hasLines {
		return append(buf, gosym.Location{Function: fname}), nil
	}
	file, line, err := r.lineAt(lineData, start, addr)
	if err != nil {
		return buf, corrupt("function %s at %#x: %v", fname, start, err)
	}
	path, err := r.path(file)
	if err != nil {
		return buf, corrupt("function %s at %#x: %v", fname, start, err)
	}
	if path == "" {
		line = 0 // no file, no line: llvm-gsymutil shows none
	}
	if inlineData == nil {
		return append(buf, gosym.Location{Function: fname, File: path, Line: line}), nil
	}
	buf, err = r.inlineStack(buf, inlineData, start, addr, fname)
	if err != nil {
		return buf[:0], corrupt("function %s at %#x: %v", fname, start, err)
	}
	// buf holds the outer frames, outermost first, and the innermost
	// frame's function last: give it its file and line, then reverse.
	buf[len(buf)-1].File, buf[len(buf)-1].Line = path, line
	for i, j := 0, len(buf)-1; i < j; i, j = i+1, j-1 {
		buf[i], buf[j] = buf[j], buf[i]
	}
	return buf, nil
}

// errFormat is a decoding error without detail, made where allocating a
// description would cost the lookups that succeed.
type errFormat string

func (e errFormat) Error() string { return string(e) }

const (
	errLEB       errFormat = "bad LEB128 number"
	errTruncated errFormat = "data truncated"
)

// uleb decodes an unsigned LEB128 number from p.
func uleb(p []byte) (v uint64, n int, err error) {
	for shift := uint(0); n < len(p); shift += 7 {
		c := p[n]
		n++
		if shift >= 64 || shift == 63 && c > 1 {
			return 0, n, errLEB
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, n, nil
		}
	}
	return 0, n, errTruncated
}

// sleb decodes a signed LEB128 number from p.
func sleb(p []byte) (v int64, n int, err error) {
	var shift uint
	for n < len(p) {
		c := p[n]
		n++
		if shift >= 64 {
			return 0, n, errLEB
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c < 0x80 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, n, nil
		}
	}
	return 0, n, errTruncated
}

// lineAt returns the file index and line of the last row at or below
// addr of the line table p of the function at start, reading rows until
// one lies beyond addr, as LLVM's LineTable::lookup does.
func (r *Reader) lineAt(p []byte, start, addr uint64) (file, line uint32, err error) {
	minD, k, err := sleb(p)
	if err != nil {
		return 0, 0, err
	}
	p = p[k:]
	maxD, k, err := sleb(p)
	if err != nil {
		return 0, 0, err
	}
	p = p[k:]
	first, k, err := uleb(p)
	if err != nil {
		return 0, 0, err
	}
	p = p[k:]
	if maxD < minD {
		return 0, 0, corrupt("line table delta range [%d, %d]", minD, maxD)
	}
	lineRange := uint64(maxD) - uint64(minD) + 1
	if lineRange == 0 {
		return 0, 0, corrupt("line table delta range [%d, %d]", minD, maxD)
	}
	cur := struct {
		addr       uint64
		file, line uint32
	}{start, 1, uint32(first)}
	found := false
	for {
		if len(p) == 0 {
			return 0, 0, errFormat("line table without end")
		}
		op := p[0]
		p = p[1:]
		push := false
		switch op {
		case opEnd:
		case opSetFile:
			v, k, err := uleb(p)
			if err != nil {
				return 0, 0, err
			}
			p, cur.file = p[k:], uint32(v)
		case opAdvancePC:
			v, k, err := uleb(p)
			if err != nil {
				return 0, 0, err
			}
			p, cur.addr, push = p[k:], cur.addr+v, true
		case opAdvanceLine:
			v, k, err := sleb(p)
			if err != nil {
				return 0, 0, err
			}
			p, cur.line = p[k:], cur.line+uint32(v)
		default:
			adj := uint64(op - opFirstSpec)
			cur.line += uint32(minD + int64(adj%lineRange))
			cur.addr += adj / lineRange
			push = true
		}
		if op == opEnd {
			break
		}
		if push {
			if addr < cur.addr {
				break
			}
			file, line, found = cur.file, cur.line, true
		}
	}
	if !found || file == 0 {
		return 0, 0, errFormat("address not in the line table")
	}
	return file, line, nil
}

// inlineStack appends to buf the frames of the inline tree p (of the
// function fname at start) around addr: for each node that covers addr
// and has a call file, from the outermost on, the frame of its caller
// with the call site; then the innermost covering node's function, for
// the caller to give its file and line. Nodes whose call file entry is
// file 0 (both offsets 0) are left out, as LLVM does. It reads the tree
// without recursion: a node's subtree, when it does not cover addr, is
// skipped by counting the lists of children it opens and closes.
func (r *Reader) inlineStack(buf []gosym.Location, p []byte, start, addr uint64, fname string) ([]gosym.Location, error) {
	caller := fname
	base := start
	depth := 0
	for {
		nr, k, err := uleb(p)
		if err != nil {
			return buf, err
		}
		p = p[k:]
		if nr == 0 {
			break // no (further) child covers addr
		}
		covered, rbase, p2, err := ranges(p, nr, base, addr)
		if err != nil {
			return buf, err
		}
		p = p2
		if len(p) < 5 {
			return buf, errTruncated
		}
		children := p[0] != 0
		name := r.o.Uint32(p[1:])
		p = p[5:]
		callFile, k, err := uleb(p)
		if err != nil {
			return buf, err
		}
		p = p[k:]
		callLine, k, err := uleb(p)
		if err != nil {
			return buf, err
		}
		p = p[k:]
		if !covered {
			if depth == 0 {
				break // the root, the function itself, does not cover addr
			}
			if children {
				if p, err = r.skip(p); err != nil {
					return buf, err
				}
			}
			continue
		}
		if callFile >= uint64(r.nfiles) {
			return buf, corrupt("call file %d of %d", callFile, r.nfiles)
		}
		if r.o.Uint64(r.files[8*callFile:]) != 0 {
			path, err := r.path(uint32(callFile))
			if err != nil {
				return buf, err
			}
			if len(buf) >= maxDepth {
				return buf, corrupt("inline tree deeper than %d", maxDepth)
			}
			line := uint32(callLine)
			if path == "" {
				line = 0 // no file, no line, as for the innermost frame
			}
			buf = append(buf, gosym.Location{Function: caller, File: path, Line: line})
			caller = r.str(name)
		}
		if !children {
			break
		}
		if depth++; depth > maxDepth {
			return buf, corrupt("inline tree deeper than %d", maxDepth)
		}
		base = rbase
	}
	return append(buf, gosym.Location{Function: caller}), nil
}

// ranges reads nr ranges from p, offsets from base, and reports whether
// one covers addr, the start of the first, and what follows.
func ranges(p []byte, nr, base, addr uint64) (covered bool, first uint64, rest []byte, err error) {
	if nr > uint64(len(p))/2 {
		return false, 0, nil, errTruncated
	}
	for j := uint64(0); j < nr; j++ {
		off, k, err := uleb(p)
		if err != nil {
			return false, 0, nil, err
		}
		p = p[k:]
		size, k, err := uleb(p)
		if err != nil {
			return false, 0, nil, err
		}
		p = p[k:]
		lo := base + off
		if j == 0 {
			first = lo
		}
		if addr >= lo && addr-lo < size {
			covered = true
		}
	}
	return covered, first, p, nil
}

// skip skips the lists of children of a node, whose header ends where p
// starts: the nodes up to the end of its list, with their own lists.
func (r *Reader) skip(p []byte) ([]byte, error) {
	for open := 1; open > 0; {
		nr, k, err := uleb(p)
		if err != nil {
			return nil, err
		}
		p = p[k:]
		if nr == 0 {
			open--
			continue
		}
		if _, _, p, err = ranges(p, nr, 0, 0); err != nil {
			return nil, err
		}
		if len(p) < 5 {
			return nil, errTruncated
		}
		if p[0] != 0 {
			open++
		}
		p = p[5:]
		for range 2 {
			if _, k, err = uleb(p); err != nil {
				return nil, err
			}
			p = p[k:]
		}
	}
	return p, nil
}

// str returns the string at offset off of the string table: up to its
// NUL byte or the table's end; "" outside the table, as LLVM reads it.
func (r *Reader) str(off uint32) string {
	t := r.strs
	if uint64(off) >= uint64(len(t)) {
		return ""
	}
	t = t[off:]
	if k := bytes.IndexByte(t, 0); k >= 0 {
		t = t[:k]
	}
	if len(t) == 0 {
		return ""
	}
	return unsafe.String(&t[0], len(t))
}

// path returns the path of file i: its directory and base name joined by
// a slash (a backslash if the directory has backslashes and no slash), as
// llvm-gsymutil prints it.
func (r *Reader) path(i uint32) (string, error) {
	if uint64(i) >= uint64(r.nfiles) {
		return "", corrupt("file %d of %d", i, r.nfiles)
	}
	if p := r.paths[i].Load(); p != nil {
		return *p, nil
	}
	dir, base := r.str(r.o.Uint32(r.files[8*i:])), r.str(r.o.Uint32(r.files[8*i+4:]))
	if dir == "" {
		return base, nil
	}
	sep := "/"
	if strings.IndexByte(dir, '\\') >= 0 && strings.IndexByte(dir, '/') < 0 {
		sep = "\\"
	}
	s := dir + sep + base
	// Remember it, unless the paths remembered would outgrow the file
	// (many entries can name one long directory).
	if r.pathBytes.Add(int64(len(s))) <= int64(2*len(r.data))+1<<20 {
		r.paths[i].Store(&s)
	}
	return s, nil
}
