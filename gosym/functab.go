package gosym

import (
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
)

// The functab (FORMAT.md, "Functab") maps PCs to _func records: nfunc sorted entries of
// (entry PC, record offset) and a sentinel holding the end of the last
// function. Before 1.18 both fields are pointers and the PC is absolute;
// from 1.18 both are u32 and the PC is an offset from runtime.text.

// textSection is one element of moduledata.textsectmap (FORMAT.md, "Text sections").
type textSection struct {
	vaddr, end, base uint64
}

// textAddr turns a 1.18+ text offset into a PC.
func (t *Table) textAddr(off uint32) uint64 {
	o := uint64(off)
	if len(t.textSects) > 1 {
		for i, s := range t.textSects {
			if o >= s.vaddr && (o < s.end || (i == len(t.textSects)-1 && o == s.end)) {
				return s.base + o - s.vaddr
			}
		}
	}
	if t.wasm {
		return (t.text+o)<<16 | t.wasmHigh
	}
	return t.text + o
}

// entryAt returns the PC of functab entry i; i == nfunc gives the end of
// the last function.
func (t *Table) entryAt(i uint64) uint64 {
	b := t.hdr.functab[i*t.hdr.entrySize():]
	if t.hdr.magic == magic12 || t.hdr.magic == magic116 {
		return t.hdr.rd.ptr(b)
	}
	return t.textAddr(t.hdr.rd.u32(b))
}

// funcOffAt returns the record offset of functab entry i (i < nfunc), and
// false for a hole (1.14–1.17 multi-section text, FORMAT.md, "Functab holes").
func (t *Table) funcOffAt(i uint64) (uint64, bool) {
	b := t.hdr.functab[i*t.hdr.entrySize():]
	if t.hdr.magic == magic12 || t.hdr.magic == magic116 {
		off := t.hdr.rd.ptr(b[t.hdr.rd.ptrSize:])
		if t.hdr.rd.ptrSize == 4 && off == math.MaxUint32 || off == math.MaxUint64 {
			return 0, false
		}
		return off, true
	}
	return uint64(t.hdr.rd.u32(b[4:])), true
}

// findFunc returns the functab index of the function holding pc.
func (t *Table) findFunc(pc uint64) (uint64, bool) {
	if i, _, _, ok := t.funcIndex.find(t.hdr.functab, pc); ok {
		return i, true
	}
	n := t.hdr.nfunc
	if n == 0 {
		return 0, false
	}
	if (t.hdr.magic == magic118 || t.hdr.magic == magic120) && len(t.textSects) <= 1 {
		base := t.text
		if t.wasm {
			// A Go 1.28 module's PCs all have bit 63 set
			// (FORMAT.md, "WebAssembly"): one without it is no PC.
			base |= t.wasmHigh
		}
		d := pc - base
		if t.wasm {
			d >>= 16
		}
		if pc < base || d > math.MaxUint32 {
			return 0, false
		}
		off := uint32(d)
		if off < t.entryOff(0) || off >= t.entryOff(n) {
			return 0, false
		}
		return t.findFuncOffset(off), true
	}
	if pc < t.entryAt(0) || pc >= t.entryAt(n) {
		return 0, false
	}
	// Largest i < n with entryAt(i) <= pc.
	lo, hi := uint64(0), n
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if t.entryAt(m) <= pc {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, true
}

// entryOff returns the text offset of 1.18+ functab entry i (i <= nfunc).
func (t *Table) entryOff(i uint64) uint32 {
	b := t.hdr.functab[i*8 : i*8+4]
	if t.hdr.rd.bigEndian {
		return uint32(b[3]) | uint32(b[2])<<8 | uint32(b[1])<<16 | uint32(b[0])<<24
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// openEntryOff is entryOff for Open, which reads a few entries once: it
// reads the entry with copyData (pread, for a File made by object.Open).
func (t *Table) openEntryOff(i uint64) uint32 {
	ob, release := t.openBuf()
	defer release()
	t.copyData(ob.entry[:], t.hdr.functab[i*8:i*8+4])
	return t.hdr.rd.u32(ob.entry[:])
}

// findFuncOffset is findFunc for 1.18+ tables with contiguous text, where
// a binary search compares the u32 text offsets in place. off must lie in
// [entryOff(0), entryOff(nfunc)).
func (t *Table) findFuncOffset(off uint32) uint64 {
	lo, hi := uint64(0), t.hdr.nfunc
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if t.entryOff(m) <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// funcIndex is the runtime's findfunctab (FORMAT.md, "findfunctab"), found through the
// moduledata of 1.18+ tables: for each 4096-byte bucket of text from
// minpc, a u32 functab index and 16 u8 deltas, one per 256-byte
// sub-bucket, giving the first function that overlaps the sub-bucket.
// With it, finding the function of a PC takes a look at a few functab
// entries next to the one it names, instead of a binary search.
//
// It serves little-endian tables with contiguous text, nearly all of
// them; the others are searched. Its answer is only a hint, checked
// against the functab: a damaged findfunctab costs time, never a wrong
// answer.
type funcIndex struct {
	buckets []byte // nil when there is no usable findfunctab
	text    uint64 // runtime.text, the base of entry offsets
	lo, hi  uint32 // entry offsets of the first function and of the end of the last
	nfunc   uint64
}

const (
	funcBucketSize    = 4096
	funcSubbucketSize = funcBucketSize / 16
	funcBucketRecSize = 4 + 16
	// hintSpan is how many functab entries after the findfunctab's hint
	// are checked before falling back to a binary search (find unrolls
	// the loop).
	hintSpan = 8
)

// newFuncIndex returns the findfunctab at addr, for text from minpc (the
// first function's entry) to maxpc, or an empty index; lo is the text
// offset of the first function's entry (entryOff(0), which Open has read).
func (t *Table) newFuncIndex(addr, minpc, maxpc uint64, lo uint32) funcIndex {
	n := t.hdr.nfunc
	if addr == 0 || t.hdr.rd.bigEndian || n < hintSpan || len(t.textSects) > 1 || minpc < t.text || maxpc < minpc || t.wasm {
		return funcIndex{}
	}
	hi := t.openEntryOff(n)
	if t.text+uint64(lo) != minpc || hi < lo {
		return funcIndex{}
	}
	// The linker writes only the sub-buckets that hold text, so the last
	// bucket may be short; lookups there search instead.
	nb := (uint64(hi-lo) + funcBucketSize - 1) / funcBucketSize
	b := t.mem.From(addr)
	if uint64(len(b)) > nb*funcBucketRecSize {
		b = b[:nb*funcBucketRecSize]
	}
	return funcIndex{buckets: b, text: t.text, lo: lo, hi: hi, nfunc: n}
}

// find returns the functab index of the function holding pc, with its
// functab entry: the text offset of its entry and the offset of its
// record. ok is false if the findfunctab cannot tell (or pc is in no
// function).
func (x *funcIndex) find(functab []byte, pc uint64) (i uint64, entryOff, funcOff uint32, ok bool) {
	d := pc - x.text - uint64(x.lo) // offset from the first function
	if d >= uint64(x.hi-x.lo) {
		return 0, 0, 0, false
	}
	rec := d / funcBucketSize * funcBucketRecSize
	if rec+funcBucketRecSize > uint64(len(x.buckets)) {
		return 0, 0, 0, false
	}
	b := x.buckets[rec : rec+funcBucketRecSize]
	i = uint64(binary.LittleEndian.Uint32(b)) + uint64(b[4+d%funcBucketSize/funcSubbucketSize])
	// The answer is the last of entries i to i+hintSpan-1 at or below
	// the offset: count those after i, without branching.
	if i+hintSpan > x.nfunc || uint64(len(functab)) < (i+hintSpan)*8+4 {
		return 0, 0, 0, false
	}
	e := (*[hintSpan*8 + 4]byte)(functab[i*8 : (i+hintSpan)*8+4])
	off := d + uint64(x.lo)
	if uint64(binary.LittleEndian.Uint32(e[:])) > off {
		return 0, 0, 0, false
	}
	// (entry - off - 1) >> 63 is 1 for entry <= off, else 0.
	c := (uint64(binary.LittleEndian.Uint32(e[8:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[16:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[24:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[32:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[40:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[48:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[56:]))-off-1)>>63 +
		(uint64(binary.LittleEndian.Uint32(e[64:]))-off-1)>>63
	if c == hintSpan {
		return 0, 0, 0, false
	}
	return i + c, binary.LittleEndian.Uint32(e[8*c:]), binary.LittleEndian.Uint32(e[8*c+4:]), true
}

// validFuncs remembers which functab entries funcAt has accepted, one bit
// each, so that a lookup that lands on one again need not read and check
// its record: the table is read-only, so the answer cannot change. The
// bits (nfunc/8 bytes) are allocated by the first check.
type validFuncs struct {
	once sync.Once
	bits atomic.Pointer[[]atomic.Uint64]
}

// has reports whether entry i has been checked.
func (v *validFuncs) has(i uint64) bool {
	bits := v.bits.Load()
	return bits != nil && i/64 < uint64(len(*bits)) && (*bits)[i/64].Load()&(1<<(i%64)) != 0
}

// add records entry i, of a table of n entries, as checked.
func (v *validFuncs) add(i, n uint64) {
	v.once.Do(func() {
		bits := make([]atomic.Uint64, (n+63)/64)
		v.bits.Store(&bits)
	})
	if bits := *v.bits.Load(); i/64 < uint64(len(bits)) {
		bits[i/64].Or(1 << (i % 64))
	}
}
