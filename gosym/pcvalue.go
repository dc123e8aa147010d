package gosym

// A pc-value table (FORMAT.md, "PC-value tables") is a sequence of (value delta, pc delta) pairs
// of varints. pcIter walks one the way the runtime's pcvalue does: the value
// starts at -1 and the PC at the function entry, and a zero value delta ends
// the table except while the PC is still the entry.
//
// Two more rules bound the work of a walk by the size of the function,
// whatever the bytes: a pair that does not advance the PC ends the table
// (the linker never writes one: funcpctab emits a pair only at a true
// instruction boundary past the previous one), and so does reaching the
// function's end (the next function's entry). A table of zero bytes, which
// the runtime would read as a run of pairs that keep the PC at the entry,
// is then one pair long, and no walk decodes more pairs than the function
// has PCs.
type pcIter struct {
	p       []byte
	quantum uint32
	entry   uint64
	end     uint64 // the function's end: the walk stops at a pair that reaches it
	lo, hi  uint64 // the current value holds for [lo, hi)
	val     int32
	ended   bool // the walk met the table's terminator (not damage)
}

// newPCIter starts walking the table at off in pctab for a function
// occupying [entry, end). An offset of 0, or one outside pctab, is an empty
// table.
func newPCIter(pctab []byte, off uint32, entry, end uint64, quantum uint32) pcIter {
	it := pcIter{quantum: quantum, entry: entry, end: end, lo: entry, hi: entry, val: -1}
	if off != 0 && uint64(off) < uint64(len(pctab)) {
		it.p = pctab[off:]
	}
	return it
}

// next decodes one pair. It reports false at the end of the table, when
// the table is truncated, or once the walk has covered the function.
func (it *pcIter) next() bool {
	p := it.p
	if len(p) == 0 || it.hi >= it.end {
		return false
	}
	uv, n := uvarint(p)
	if n == 0 || (uv == 0 && it.hi != it.entry) {
		it.p, it.ended = nil, n != 0
		return false
	}
	p = p[n:]
	pcd, n := uvarint(p)
	if n == 0 || pcd == 0 {
		it.p = nil
		return false
	}
	it.p = p[n:]
	it.val += int32(-(uv & 1) ^ (uv >> 1))
	it.lo = it.hi
	it.hi += uint64(pcd) * uint64(it.quantum)
	return true
}

// uvarint decodes an unsigned LEB128 value of at most 32 bits. It returns
// n == 0 if p ends before the value does or the value is too long. Most
// values fit one byte; that case is small enough to inline.
func uvarint(p []byte) (v uint32, n int) {
	if len(p) > 0 && p[0] < 0x80 {
		return uint32(p[0]), 1
	}
	return uvarintLong(p)
}

// uvarintLong is uvarint for values of more than one byte.
func uvarintLong(p []byte) (v uint32, n int) {
	var shift uint
	for i, b := range p {
		if i == 5 {
			return 0, 0
		}
		v |= uint32(b&0x7f) << shift
		if b < 0x80 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}

// pcvalue returns the value of the table at off for target, or -1 if the
// table does not cover target. It is pcIter's walk, unrolled; since every
// pair advances the PC, it decodes at most one pair per quantum between
// entry and target.
func (t *Table) pcvalue(off uint32, entry, target uint64) int32 {
	if off == 0 || uint64(off) >= uint64(len(t.hdr.pctab)) {
		return -1
	}
	p := t.hdr.pctab[off:]
	quantum := t.hdr.quantum
	pc, val := entry, int32(-1)
	for {
		uv, n := uvarint(p)
		if n == 0 || (uv == 0 && pc != entry) {
			return -1
		}
		p = p[n:]
		pcd, n := uvarint(p)
		if n == 0 || pcd == 0 {
			return -1
		}
		p = p[n:]
		val += int32(-(uv & 1) ^ (uv >> 1))
		pc += uint64(pcd) * uint64(quantum)
		if target < pc {
			return val
		}
	}
}
