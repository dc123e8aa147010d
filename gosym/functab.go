package gosym

import "math"

// The functab (spec §2) maps PCs to _func records: nfunc sorted entries of
// (entry PC, record offset) and a sentinel holding the end of the last
// function. Before 1.18 both fields are pointers and the PC is absolute;
// from 1.18 both are u32 and the PC is an offset from runtime.text.

// textSection is one element of moduledata.textsectmap (spec §2.3).
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
	return t.text + o
}

// entryAt returns the PC of functab entry i; i == nfunc gives the end of
// the last function.
func (t *Table) entryAt(i uint64) uint64 {
	b := t.h.functab[i*t.h.entrySize():]
	if t.h.magic == magic12 || t.h.magic == magic116 {
		return t.h.rd.ptr(b)
	}
	return t.textAddr(t.h.rd.u32(b))
}

// funcOffAt returns the record offset of functab entry i (i < nfunc), and
// false for a hole (1.14–1.17 multi-section text, spec §2.4).
func (t *Table) funcOffAt(i uint64) (uint64, bool) {
	b := t.h.functab[i*t.h.entrySize():]
	if t.h.magic == magic12 || t.h.magic == magic116 {
		off := t.h.rd.ptr(b[t.h.rd.ptrSize:])
		if t.h.rd.ptrSize == 4 && off == math.MaxUint32 || off == math.MaxUint64 {
			return 0, false
		}
		return off, true
	}
	return uint64(t.h.rd.u32(b[4:])), true
}

// findFunc returns the functab index of the function holding pc.
func (t *Table) findFunc(pc uint64) (uint64, bool) {
	n := t.h.nfunc
	if n == 0 || pc < t.entryAt(0) || pc >= t.entryAt(n) {
		return 0, false
	}
	if (t.h.magic == magic118 || t.h.magic == magic120) && len(t.textSects) <= 1 {
		return t.findFuncOffset(uint32(pc - t.text)), true
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

// findFuncOffset is findFunc for 1.18+ tables with contiguous text, where
// the search compares the u32 text offsets in place.
func (t *Table) findFuncOffset(off uint32) uint64 {
	tab := t.h.functab
	be := t.h.rd.bigEndian
	lo, hi := uint64(0), t.h.nfunc
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		b := tab[m*8 : m*8+4]
		var e uint32
		if be {
			e = uint32(b[3]) | uint32(b[2])<<8 | uint32(b[1])<<16 | uint32(b[0])<<24
		} else {
			e = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		}
		if e <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}
