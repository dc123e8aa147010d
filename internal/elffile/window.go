package elffile

// A window reads a table of the file (symbol entries, names, hash words)
// for a symbol lookup, which reads few of its bytes once: through f's
// copier (pread, for a File that package object opened; see NewBytesAt),
// a chunk of chunk bytes at a time, rather than through the fresh
// mapping, where each page read costs a page fault. Without a copier it
// returns slices of the table itself.
type window struct {
	f     *File
	src   []byte // the table, in the file's bytes
	buf   []byte // the chunk read; nil until the first read
	chunk []byte // where chunks are read
	lo    uint64 // offset in src of buf[0]
}

// at returns the n bytes of the table at off, which the caller has
// checked lie inside it. Reads larger than a chunk, and reads a copier
// fails to complete, return the table's own bytes.
func (w *window) at(off, n uint64) []byte {
	if w.f.copier == nil || n > uint64(len(w.chunk)) {
		return w.src[off : off+n]
	}
	if w.buf == nil || off < w.lo || off+n > w.lo+uint64(len(w.buf)) {
		m := w.f.copier.Copy(w.chunk, w.src[off:])
		if uint64(m) < n {
			w.buf = nil
			return w.src[off : off+n]
		}
		w.buf, w.lo = w.chunk[:m], off
	}
	return w.buf[off-w.lo : off-w.lo+n]
}

// has reports whether the name at offset off of the string table the
// window reads is name, followed by its NUL (objfile.StringTable.Has).
func (w *window) has(off uint64, name string) bool {
	n := uint64(len(name))
	if off >= uint64(len(w.src)) || n >= uint64(len(w.src))-off {
		return false
	}
	b := w.at(off, n+1)
	return b[n] == 0 && string(b[:n]) == name
}

// lookupChunk is how many bytes of a table a lookup reads at once
// through a window.
const lookupChunk = 4 << 10

// lookupBuf holds the chunks of a lookup's windows: of the symbols, of
// their names, and of the hash table.
type lookupBuf struct {
	syms, names, hash [lookupChunk]byte
}

// lookupBufs keeps up to two lookupBufs for reuse, for as long as the
// program runs, so that lookups allocate nothing once warm (a sync.Pool
// drops them at each garbage collection, and the fresh memory of the
// next costs page faults).
var lookupBufs = make(chan *lookupBuf, 2)

// windows returns windows on syms, names and hash, and the lookupBuf
// that holds their chunks, for release. Without a copier they need none,
// and lb is nil.
func (f *File) windows(syms, names, hash []byte) (sw, nw, hw window, lb *lookupBuf) {
	if f.copier == nil {
		return window{f: f, src: syms}, window{f: f, src: names}, window{f: f, src: hash}, nil
	}
	select {
	case lb = <-lookupBufs:
	default:
		lb = new(lookupBuf)
	}
	return window{f: f, src: syms, chunk: lb.syms[:]}, window{f: f, src: names, chunk: lb.names[:]},
		window{f: f, src: hash, chunk: lb.hash[:]}, lb
}

// release returns lb, if not nil, to lookupBufs.
func (lb *lookupBuf) release() {
	if lb != nil {
		select {
		case lookupBufs <- lb:
		default:
		}
	}
}
