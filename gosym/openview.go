package gosym

import (
	"encoding/binary"
	"math"
)

// Open reads the records it checks (checkGofunc's samples, the first
// record) through an open view: a Table like the one being opened, but
// whose functab holds a copy of the first entries and whose funcs a copy
// of their records, read with copyData (pread, for a File made by
// object.Open) rather than through the fresh mapping, where each page
// read costs a page fault (BENCHMARKS.md, "Big binaries"). The checks
// run on the view as they would on the Table, by the same code: the
// view's record offsets are rebased on the copy, and a view is made only
// where every record among its entries that is inside the table is
// whole in the copy, so that each check answers on the view as on the
// table.

// Sizes of the copies of an open view.
const (
	openFunctabMax = (gofuncWindow*quickSample + 1) * 8
	openFuncsMax   = 32 << 10
	openNamesMax   = 1 << 10
	openSlack      = 4 << 10
)

// openBuf holds what Open reads with copyData: the copies of an open
// view, the chunk the scan for the moduledata reads through, and the
// header, build info, moduledata, functab entry and inline record it
// reads. (Arrays on the stack would escape to the heap: copyData's
// reader is a function variable.)
type openBuf struct {
	functab [openFunctabMax]byte
	funcs   [openFuncsMax]byte
	names   [openNamesMax]byte
	scan    [mdScanChunk]byte
	head    [maxHeaderSize]byte
	blob    [4 << 10]byte
	md      [mdReadSize]byte
	entry   [4]byte
	inl     [32]byte // an inline record: at most 20 bytes

	// view is the open view checkGofunc made in the buffer for the Table
	// being opened, which the first record's check reuses; nil if none.
	view *Table
}

// openBufs keeps up to two openBufs (about 106 KiB each) for reuse, for as
// long as the program runs: Open allocates none once warm. (A sync.Pool
// drops them at each garbage collection; the fresh memory of the next
// costs Open page faults, as many as its reads of the mapping did.)
var openBufs = make(chan *openBuf, 2)

// getOpenBuf returns an openBuf from openBufs, or a new one.
func getOpenBuf() *openBuf {
	select {
	case b := <-openBufs:
		return b
	default:
		return new(openBuf)
	}
}

// putOpenBuf returns b to openBufs, unless it is full.
func putOpenBuf(b *openBuf) {
	b.view = nil // it keeps its Table's object
	select {
	case openBufs <- b:
	default:
	}
}

// openBuf returns the openBuf of the Table being opened (Table.open), or
// one from openBufs, and the function that releases it.
func (t *Table) openBuf() (*openBuf, func()) {
	if t.open != nil {
		return t.open, func() {}
	}
	b := getOpenBuf()
	return b, func() { putOpenBuf(b) }
}

// openView returns a view of t's first n functab entries (n <= nfunc)
// and their records, in b; nil if t is not a 1.18+ table, or if the
// entries or their records do not fit b. If names, the view's function
// name table is a copy of the first bytes of t's: for checkRecord, whose
// success on the view implies it on t (the bytes it reads are the same),
// and whose failure is then found again on t.
func (t *Table) openView(b *openBuf, n uint64, names bool) *Table {
	h := t.hdr
	if h.magic != magic118 && h.magic != magic120 || n == 0 || n > h.nfunc {
		return nil
	}
	size := min(uint64(len(h.functab)), (n+1)*8) // entry n's PC is its first 4 bytes
	if size > uint64(len(b.functab)) {
		return nil
	}
	ft := b.functab[:size]
	if uint64(t.copyData(ft, h.functab[:size])) != size {
		return nil
	}
	rd, l, funcs := h.rd, &t.layout, h.funcs
	fixed := uint64(l.fixedSize)
	inside := func(off uint64) bool { return off <= uint64(len(funcs)) && uint64(len(funcs))-off >= fixed }
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for i := range n {
		if off := uint64(rd.u32(ft[i*8+4:])); inside(off) {
			lo, hi = min(lo, off), max(hi, off+fixed)
		}
	}
	if lo > hi {
		lo, hi = 0, 0
	}
	if hi-lo > uint64(len(b.funcs)) {
		return nil
	}
	// The copy holds the records' fixed parts and openSlack bytes more
	// for the arrays of the last.
	end := min(hi+openSlack, lo+uint64(len(b.funcs)), uint64(len(funcs)))
	fc := b.funcs[:t.copyData(b.funcs[:end-lo], funcs[lo:end])]
	if uint64(len(fc)) != end-lo {
		return nil
	}
	for i := range n {
		off := uint64(rd.u32(ft[i*8+4:]))
		if !inside(off) {
			rd.putU32(ft[i*8+4:], math.MaxUint32) // out of the view's funcs too
			continue
		}
		// The record's size as recordAt and checkRecord compute it (the
		// 1.18+ layouts have no pointer-sized funcdata): whole in the
		// copy if it is in the table.
		rec := fc[off-lo:]
		size := fixed + 4*uint64(rd.u32(rec[l.npcdata:])) + 4*uint64(t.nfuncdata(rec))
		if size <= uint64(len(funcs))-off && size > uint64(len(rec)) {
			return nil
		}
		rd.putU32(ft[i*8+4:], uint32(off-lo))
	}
	vh := *h
	vh.functab, vh.funcs = ft, fc
	if names {
		vh.names = b.names[:t.copyData(b.names[:], h.names)]
	}
	return t.newView(&vh, n)
}

// newView returns the open view of t with header vh, of n entries.
func (t *Table) newView(vh *header, n uint64) *Table {
	v := &Table{obj: t.obj, hdr: vh, layout: t.layout, data: t.data, addr: t.addr, mem: t.mem,
		text: t.text, textSects: t.textSects, wasm: t.wasm, wasmHigh: t.wasmHigh, gofunc: t.gofunc,
		names: t.names, files: t.files, views: n}
	v.wrapper.known = t.wrapper.known
	return v
}

// withNames returns the open view v, made without names, with a copy of
// the first bytes of the function name table in b, as openView's names
// gives.
func (v *Table) withNames(b *openBuf) *Table {
	vh := *v.hdr
	vh.names = b.names[:v.copyData(b.names[:], v.hdr.names)]
	return v.newView(&vh, v.views)
}

// checkFirstRecord is checkRecord(0), on an open view where one can be
// made (b.view, checkGofunc's, with names, or one of the first entry):
// the view's answer stands if it accepts the record; otherwise t
// answers, with the error checkRecord gives.
func (t *Table) checkFirstRecord(b *openBuf) error {
	v := b.view
	if v != nil {
		v = v.withNames(b)
	} else {
		v = t.openView(b, 1, true)
	}
	if v != nil {
		if _, _, err := v.checkRecord(0); err == nil {
			return nil
		}
	}
	_, _, err := t.checkRecord(0)
	return err
}

// putU32 stores v in b in r's byte order.
func (r reader) putU32(b []byte, v uint32) {
	if r.bigEndian {
		binary.BigEndian.PutUint32(b, v)
	} else {
		binary.LittleEndian.PutUint32(b, v)
	}
}
