package gosym

import (
	"cmp"
	"fmt"
	"slices"
)

// A table that is not exactly what a Go linker writes is read only after
// it has been checked against its own structure (TESTING.md, "Day zero and
// hidden tables", lists the variants tested):
//
//   - an unknown magic, or a 1.18+ header without its textStart word, is
//     read as the Go 1.20 layout (parseHeader);
//   - garble (mvdan.cc/garble) stores each _func's entry offset XORed
//     with the product of its name offset and a key of the build; the
//     runtime it patches undoes this in funcInfo.entry. The key is
//     recovered from the records themselves, and every record is checked
//     with it when it is first read (checkRecord);
//   - such tables, and tables of a release the build info does not name,
//     have a sample of their functab checked at open: entries sorted and
//     inside the text the moduledata bounds, records in range, their
//     entries agreeing with the functab.
//
// The work is bounded by validateSample records, whatever the table's
// size.

// validateSample is the number of functab entries, spread over the table,
// checked at open by validate for a repaired table or one of an unknown
// release, and whose funcID is read for every table; quickSample the
// number whose inline tree is checked for every other 1.18+ table (among
// the first functions: see checkGofunc).
const (
	validateSample = 64
	quickSample    = 8
)

// sampleSize returns how many functab entries validate samples.
func (t *Table) sampleSize() uint64 {
	if t.repaired() || !t.wrapper.known {
		return min(t.hdr.nfunc, validateSample)
	}
	return min(t.hdr.nfunc, quickSample)
}

// magicKnown reports whether the header's first word is a magic some
// release writes.
func (h *header) magicKnown() bool { return h.stored == uint32(h.magic) }

// repaired reports whether the table is read by a rule the Go linker's
// own output does not need: an unknown magic, a missing textStart word,
// or garble's XORed entry offsets.
func (t *Table) repaired() bool {
	h := t.hdr
	return !h.magicKnown() || (h.words == 7 && h.magic != magic116) || h.entryKey != 0 || h.funcIDBeyond != 0
}

// Repairs lists, for Info, what was read differently from the Go linker's
// output.
func (t *Table) repairs() []string {
	t.wrapperID() // runs checkFuncIDs
	h := t.hdr
	var r []string
	if !h.magicKnown() {
		v := "1.20"
		if h.magic == magic118 {
			v = "1.18" // recordFamily
		}
		r = append(r, fmt.Sprintf("unknown magic %#x read as the Go %s layout", h.stored, v))
	}
	if h.words == 7 && h.magic != magic116 {
		r = append(r, "header without the textStart word")
	}
	if h.entryKey != 0 {
		r = append(r, fmt.Sprintf("record entry offsets XORed with name offset × %#x (garble), undone", h.entryKey))
	}
	if h.funcIDBeyond != 0 {
		r = append(r, fmt.Sprintf("funcID %d above Go 1.%d's wrapper funcID %d: the wrapper funcID learned from runtime.deferreturn", h.funcIDBeyond, t.layout.minor, t.layout.wrapperID))
	}
	return r
}

// validated says, for Info, what was checked at open.
func (t *Table) validated() string {
	t.wrapperID() // runs checkFuncIDs, which repaired reads: before it, with its once
	s := "header offsets in order and inside the table"
	if t.hdr.magic == magic118 || t.hdr.magic == magic120 {
		s += "; moduledata pointers (pcHeader, pclntable, ftab, nfunc, minpc) agree with the pclntab, and its gofunc locates the sampled inline trees"
	}
	if t.hdr.nfunc == 0 {
		return s
	}
	if t.repaired() || !t.wrapper.known {
		n := min(t.hdr.nfunc, validateSample)
		s += fmt.Sprintf("; %d of %d functab entries sorted, with records that agree", n, t.hdr.nfunc)
		if t.hdr.entryKey != 0 {
			s += " under the entry key"
		}
	} else {
		s += "; the first record agrees with the functab"
	}
	return s + "; every other record when first read"
}

// validate runs after the moduledata is found: it learns garble's entry
// key if the magic is unknown, and checks a sample of the functab for
// repaired tables and tables of an unknown release.
func (t *Table) validate() error {
	h := t.hdr
	if h.nfunc == 0 {
		return nil
	}
	if !h.magicKnown() && (h.magic == magic118 || h.magic == magic120) {
		key, err := t.learnEntryKey()
		if err != nil {
			return err
		}
		h.entryKey = key
	}
	if err := t.checkGofunc(); err != nil {
		return err
	}
	if !t.repaired() && t.wrapper.known {
		return nil
	}
	return t.checkSample()
}

// checkGofunc checks the funcdata base of a 1.18+ table, taken from the
// word of the moduledata where the release's layout puts gofunc: the
// first inline record of sampled functions that have an inline tree must
// be one (its padding zero, its name offset inside the name table, its
// call site inside the function). A moduledata with a field added or
// removed before gofunc, by a release the reader does not know, moves the
// base and fails this for nearly every tree; a damaged tree fails it
// alone, and its function's lookups say so. So the table is refused only
// when at least 3 sampled trees were read and fewer than half pass.
//
// Each page read here is a page fault of Open's, the most of its cost on
// a freshly mapped file (BENCHMARKS.md, "Big binaries"), so the samples
// are near each other and near what Open reads anyway: the functions of
// the first gofuncWindow×k functab entries (whose entries and records
// follow the first ones, which Open reads), at most 4×k of them with a
// tree, of which the k distinct trees that lie closest together. A wrong
// base moves every tree by the same distance, so that choice favours none.
// Where fewer than 3 of the first functions have a tree, k functions
// spread over the table are sampled instead.
//
// The functab entries and records are read through an open view
// (openview.go) where one can be made and the samples are among the first
// functions, and the first inline record of each tree with copyData.
func (t *Table) checkGofunc() error {
	if t.hdr.magic != magic118 && t.hdr.magic != magic120 || t.layout.inlKind == inlNone {
		return nil
	}
	b, release := t.openBuf()
	defer release()
	v := t.openView(b, min(t.hdr.nfunc, uint64(gofuncWindow)*t.sampleSize()), false)
	if t.open != nil {
		t.open.view = v // for checkFirstRecord
	}
	return t.checkGofuncOn(v)
}

// checkGofuncOn is checkGofunc, reading the functab and the records
// through v, an open view of t, where it holds the samples; through t if
// v is nil or does not.
func (t *Table) checkGofuncOn(v *Table) error {
	var buf [4 * validateSample]gofuncSample
	samples, ok := v.gofuncSamples(&buf)
	if v == nil || !ok {
		v = t
		samples, _ = t.gofuncSamples(&buf)
	}
	read, good := 0, 0
	ib, release := t.openBuf()
	defer release()
	// The trees' first records: read together, with one pread, where the
	// samples (sorted by address) lie within a chunk of one section.
	size := uint64(t.layout.inlRecordSize)
	var span []byte
	var first uint64
	if len(samples) > 0 {
		first = samples[0].addr
		if n := samples[len(samples)-1].addr - first + size; n <= uint64(len(ib.scan)) {
			if src := t.mem.Slice(first, n); src != nil {
				span = ib.scan[:t.copyData(ib.scan[:n], src)]
			}
		}
	}
	rb := ib.inl[:]
	for _, c := range samples {
		f, _ := v.recordAt(c.i)
		tree, ok, err := f.inlineTree()
		if !ok && err == nil {
			continue
		}
		read++
		if err != nil {
			continue
		}
		// Decoded here, not by f.record, whose name check copies the
		// name table (strtab) on first use: Open must not.
		n := min(uint64(len(rb)), size, uint64(len(tree.recs)))
		var r []byte
		if a := c.addr - first; span != nil && a <= uint64(len(span)) && n <= uint64(len(span))-a {
			r = span[a : a+n]
		} else {
			r = rb[:t.copyData(rb[:n], tree.recs)]
		}
		if len(r) < t.layout.inlRecordSize {
			continue
		}
		rd := t.hdr.rd
		var nameOff, parentPC uint32
		var pad bool
		if t.layout.inlKind == inl120 {
			nameOff, parentPC, pad = rd.u32(r[4:]), rd.u32(r[8:]), r[1] == 0 && r[2] == 0 && r[3] == 0
		} else { // inl112: the first record's parent is -1
			nameOff, parentPC, pad = rd.u32(r[12:]), rd.u32(r[16:]), r[3] == 0 && int16(rd.u16(r)) == -1
		}
		if uint64(nameOff) < uint64(len(t.hdr.names)) && pad && uint64(parentPC) < f.End()-f.Entry() {
			good++
		}
	}
	if read >= 3 && good*2 < read {
		return corrupt("moduledata's gofunc %#x (word %d of Go 1.%d's layout) does not locate the inline trees of %d of %d sampled functions: a moduledata layout this reader does not know?",
			t.gofunc, moduledataLayoutFor(t.layout.minor).gofunc, t.layout.minor, read-good, read)
	}
	return nil
}

// A gofuncSample is a function checkGofunc checks: its functab index and
// the address of its inline tree.
type gofuncSample struct{ addr, i uint64 }

// gofuncSamples returns the functions checkGofunc checks, in buf. ok is
// false, and there are none, when t is an open view that does not hold
// them (functions spread over the table) or is nil.
func (t *Table) gofuncSamples(buf *[4 * validateSample]gofuncSample) (samples []gofuncSample, ok bool) {
	if t == nil {
		return nil, false
	}
	k := int(t.sampleSize())
	n := t.hdr.nfunc
	cand := buf[:0]
	add := func(i uint64) {
		f, ok := t.recordAt(i)
		if !ok || f.pcdata(t.layout.pcdataInlIndex) == 0 {
			return
		}
		if addr, ok := f.funcdata(t.layout.funcdataInlTree); ok {
			cand = append(cand, gofuncSample{addr, i})
		}
	}
	for i := uint64(0); i < min(n, uint64(gofuncWindow*k)) && len(cand) < 4*k; i++ {
		add(i)
	}
	if len(cand) < 3 && n > uint64(gofuncWindow*k) {
		// Too few trees among the first functions to decide (a table
		// with little inlining): k functions spread over the table, at a
		// page fault or two each.
		if t.views != 0 {
			return nil, false
		}
		cand = buf[:0]
		for j := uint64(0); j < uint64(k); j++ {
			add(j * (n - 1) / uint64(max(k-1, 1)))
		}
	}
	slices.SortFunc(cand, func(a, b gofuncSample) int { return cmp.Compare(a.addr, b.addr) })
	// Functions may share a tree (the linker stores equal ones once):
	// each tree counts once.
	cand = slices.CompactFunc(cand, func(a, b gofuncSample) bool { return a.addr == b.addr })
	if len(cand) <= k {
		return cand, true
	}
	// The k consecutive trees of least span.
	best := 0
	for j := 1; j+k <= len(cand); j++ {
		if cand[j+k-1].addr-cand[j].addr < cand[best+k-1].addr-cand[best].addr {
			best = j
		}
	}
	return cand[best : best+k], true
}

// gofuncWindow is the number of functab entries per sample among whose
// functions checkGofunc chooses its samples: Go 1.19–1.26 binaries have
// 8 trees in their first 30–100 functions.
const gofuncWindow = 32

// recordAt returns the function of functab entry i for checkGofunc: false
// if its record is not inside the table or its entry is after the next
// one's. The record's own checks (its name among them) are left to its
// first lookup: each page read at Open is a page fault.
func (t *Table) recordAt(i uint64) (Function, bool) {
	off, ok := t.funcOffAt(i)
	funcs := t.hdr.funcs
	if !ok || off > uint64(len(funcs)) || uint64(len(funcs))-off < uint64(t.layout.fixedSize) {
		return Function{}, false
	}
	rec := funcs[off:]
	if size := uint64(t.layout.fixedSize) + 4*uint64(t.hdr.rd.u32(rec[t.layout.npcdata:])) + 4*uint64(t.nfuncdata(rec)); size > uint64(len(rec)) {
		return Function{}, false
	}
	f := Function{t: t, entry: t.entryAt(i), off: uint32(off), idx: uint32(i)}
	if t.entryAt(i+1) < f.entry {
		return Function{}, false
	}
	return f, true
}

// checkFuncIDs reads the funcID of validateSample records spread over the
// table. Wrappers have the largest funcID of a release's list
// (internal/abi.FuncIDWrapper is its last entry), so a larger one means
// the list was renumbered by a release the table's build info does not
// tell apart: the wrapper funcID is then learned from runtime.deferreturn,
// which every release since 1.14 marks as a wrapper (wrapperID), instead
// of taken from the release. wrapperID runs it once, on first use.
func (t *Table) checkFuncIDs() {
	l := &t.layout
	if l.funcIDSize != 1 || l.wrapperID < 0 || t.hdr.magic == magic12 {
		return
	}
	n := t.hdr.nfunc
	k := min(n, validateSample) // one byte of each record: wrappers are few
	for j := uint64(0); j < k; j++ {
		off, ok := t.funcOffAt(j * (n - 1) / max(k-1, 1))
		if !ok || off >= uint64(len(t.hdr.funcs)) || uint64(len(t.hdr.funcs))-off < uint64(l.fixedSize) {
			continue
		}
		if id := t.hdr.funcs[off+uint64(l.funcID)]; int(id) > l.wrapperID && id > t.hdr.funcIDBeyond {
			t.hdr.funcIDBeyond = id
		}
	}
}

// checkSample checks validateSample functab entries spread over the
// table, the first and the last among them: sorted, not past the end of
// the last function, and records that checkRecord accepts (for 1.18+
// tables the moduledata's minpc is the first entry: parseModuledata).
func (t *Table) checkSample() error {
	n := t.hdr.nfunc
	k := min(n, validateSample)
	prev := uint64(0)
	for j := uint64(0); j < k; j++ {
		i := j * (n - 1) / max(k-1, 1)
		e := t.entryAt(i)
		if j > 0 && e < prev {
			return corrupt("functab not sorted: entry %d (%#x) before entry %d's", i, e, j*(n-1)/max(k-1, 1))
		}
		prev = e
		if _, _, err := t.checkRecord(i); err != nil {
			return err
		}
	}
	if end := t.entryAt(n); end < prev {
		return corrupt("functab's end %#x before its last function's entry %#x", end, prev)
	}
	return nil
}

// learnEntryKey recovers garble's key from the records: each stores
// entryOff ^ nameOff*key where the functab holds entryOff. A record with an
// odd name offset gives the key (odd numbers are invertible modulo 2³²);
// every sampled record must agree with it. It returns 0 when the records
// agree with the functab as they are.
func (t *Table) learnEntryKey() (uint32, error) {
	n := t.hdr.nfunc
	k := min(n, validateSample)
	var key uint32
	found := false
	sample := func(j uint64) (x, nameOff uint32, ok bool) {
		return t.entryXor(j * (n - 1) / max(k-1, 1))
	}
	for j := uint64(0); j < k && !found; j++ {
		x, no, ok := sample(j)
		if ok && no%2 == 1 {
			key, found = x*inverse32(no), true
		}
	}
	for j := uint64(0); j < k; j++ {
		x, no, ok := sample(j)
		if !ok {
			continue
		}
		if !found && x != 0 {
			return 0, corrupt("unknown magic %#x: record entry offsets disagree with the functab (function %d), and no record with an odd name offset gives a key", t.hdr.stored, j*(n-1)/max(k-1, 1))
		}
		if x != no*key {
			return 0, corrupt("unknown magic %#x: record entry offsets disagree with the functab, and not by garble's XOR with name offset × key (function %d)", t.hdr.stored, j*(n-1)/max(k-1, 1))
		}
	}
	return key, nil
}

// entryXor returns, for 1.18+ functab entry i, the XOR of its record's
// entry offset with the functab's, and the record's name offset; false if
// the record is out of range.
func (t *Table) entryXor(i uint64) (x, nameOff uint32, ok bool) {
	off, ok := t.funcOffAt(i)
	funcs := t.hdr.funcs
	if !ok || off > uint64(len(funcs)) || uint64(len(funcs))-off < uint64(t.layout.fixedSize) {
		return 0, 0, false
	}
	rd := t.hdr.rd
	rec := funcs[off:]
	return rd.u32(rec) ^ rd.u32(t.hdr.functab[i*8:]), rd.u32(rec[t.layout.nameOff:]), true
}

// inverse32 returns the inverse of odd a modulo 2³² (Newton's iteration:
// each step doubles the number of correct low bits, from 3).
func inverse32(a uint32) uint32 {
	x := a // correct to 3 bits: a*a ≡ 1 mod 8 for odd a
	for range 4 {
		x *= 2 - a*x
	}
	return x
}
