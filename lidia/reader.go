package lidia

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"unsafe"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

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

	// For files whose ranges nest (nest.go), as Write makes them: the
	// ranges as nodes, the pieces and their index, and the segments of
	// the address space they are in. nodes is nil for other files, which
	// Lookup reads with Pyroscope's backward walk (walk.go).
	nodes []node
	pcs   []piece
	pidx  bucketIndex
	segs  []segment

	// The index of the VAs, for the walk.
	vidx bucketIndex

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
// nest, about 56 bytes per range (see the package documentation, "Reading").
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
	if !r.nest() {
		r.vidx = newBucketIndex(r.n, 8, r.vaAt)
	}
	return r, nil
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

// Lookup appends to buf[:0] the frames at addr, innermost inlined call
// first and the physical function last, each with its function, file and
// line, as gosym's Table.ResolveLocations does (StartLine and Wrapper,
// which Lidia files do not record, are zero). An address that no range
// covers gives no frame and an error wrapping gosym.ErrPCNotFound.
// Lookup allocates nothing when buf has room for the frames.
//
// In a file whose ranges nest, as Write makes them, the innermost frame
// takes its file from its range and its line from the range's line table;
// every outer frame takes its file and line from the call site recorded in
// the range one deeper; in a depth-0 range's alignment padding (see the
// package documentation), the frame has no file and line 0. Other files
// (such as Pyroscope's, which hold duplicate symbols) are read with
// Pyroscope's backward walk, which gives every covering range its own file
// and line.
func (r *Reader) Lookup(addr uint64, buf []gosym.Location) ([]gosym.Location, error) {
	buf = buf[:0]
	if r.closed.Load() {
		return buf, ErrClosed
	}
	var err error
	if r.nodes == nil {
		buf, err = r.walk(buf, addr)
	} else {
		buf, err = r.lookupNest(buf, addr)
	}
	if err == nil && len(buf) == 0 {
		err = errNotFound
	}
	return buf, err
}

// errNotFound is Lookup's error at an address no range covers.
var errNotFound = fmt.Errorf("lidia: %w", gosym.ErrPCNotFound)

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

// lineOff returns the offset of line entry j.
func (r *Reader) lineOff(j uint64) uint64 {
	if r.lW == 2 {
		return uint64(le.Uint16(r.lines[4*j:]))
	}
	return uint64(le.Uint32(r.lines[8*j:]))
}

// lineNum returns the line of line entry j.
func (r *Reader) lineNum(j uint64) uint32 {
	if r.lW == 2 {
		return uint32(le.Uint16(r.lines[4*j+2:]))
	}
	return le.Uint32(r.lines[8*j+4:])
}

// afterFrom is after for an answer expected near lo: it reads the
// entries from lo one by one, then searches beyond the eighth.
func (r *Reader) afterFrom(lo, hi, rel uint64) uint64 {
	for stop := min(lo+8, hi); lo < stop; lo++ {
		if r.lineOff(lo) > rel {
			return lo
		}
	}
	return r.after(lo, hi, rel)
}

// after returns the first line entry in [lo, hi) whose offset is above
// rel, or hi. The offsets of a line table are sorted.
func (r *Reader) after(lo, hi, rel uint64) uint64 {
	for lo < hi {
		m := (lo + hi) >> 1
		if r.lineOff(m) <= rel {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
