package gosym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/object"
)

// Hostile inputs of the third round of issues (issue 21): pc-value
// tables of zero bytes and inline trees whose walk does not step down
// (r01), built from the newest fuzz base; the helpers here build the
// other cases (names, functab, padding) next to their areas' tests.

// newestBase returns a copy of the newest fuzz base, its Table, and the
// index of its pclntab section.
func newestBase(t *testing.T) (*memObject, *Table, int) {
	t.Helper()
	loadFuzzBases(t)
	base := fuzzBases.objs[len(fuzzBases.objs)-1]
	sec := base.section(".gopclntab")
	if sec < 0 {
		t.Fatal("no .gopclntab")
	}
	m := damaged(base, sec, 0, nil, 0) // a copy of the section, to patch
	tab, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	return m, tab, sec
}

// sectionOffset returns the offset of sub, a slice of sec, in sec.
func sectionOffset(t *testing.T, sec, sub []byte) int {
	t.Helper()
	off, ok := offsetIn(sec, sub)
	if !ok {
		t.Fatal("slice not in the section")
	}
	return int(off)
}

// functionOfSize returns a function of tab with an inline tree, of at
// least min and at most max bytes.
func functionOfSize(t *testing.T, tab *Table, min, max uint64) Function {
	t.Helper()
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := f.inlineTree(); ok && err == nil && f.End()-f.Entry() >= min && f.End()-f.Entry() <= max {
			return f
		}
	}
	t.Fatalf("no function with an inline tree of %d to %d bytes", min, max)
	return Function{}
}

// countPairs returns how many pairs a walk of the table at off decodes.
func countPairs(f Function, off uint32) int {
	n := 0
	for it := f.rangeIter(off); it.next(); {
		n++
	}
	return n
}

// TestZeroPairRuns points a function's pcln, pcfile and InlTreeIndex
// tables at a run of zero bytes longer than the function (r01: the
// runtime's decoder reads such a run as pairs that keep the PC at the
// entry, and a lookup decoded it again at every step of the inline walk).
// Every walk must decode at most one pair per PC of the function (here
// none: a pair that does not advance the PC ends the table), the unrolled
// decoder must agree with the iterator at every PC, and lookups must
// answer without allocating.
func TestZeroPairRuns(t *testing.T) {
	m, tab, sec := newestBase(t)
	f := functionOfSize(t, tab, 64, 512)
	size := f.End() - f.Entry()
	l := &tab.layout
	d := m.data[sec]
	rec := sectionOffset(t, d, f.rec())
	run := sectionOffset(t, d, tab.hdr.pctab) + int(f.field(l.pcln))
	zeros := 4*int(size) + 64 // more pairs than the function has PCs
	clear(d[run : run+zeros])
	off := f.field(l.pcln)
	rd := tab.hdr.rd
	for _, field := range []int{l.pcfile, l.fixedSize + 4*l.pcdataInlIndex} {
		if rd.bigEndian {
			binary.BigEndian.PutUint32(d[rec+field:], off)
		} else {
			binary.LittleEndian.PutUint32(d[rec+field:], off)
		}
	}
	bad, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	g, err := bad.ResolveFunction(f.Entry())
	if err != nil {
		t.Fatal(err)
	}
	tree, _, _ := g.inlineTree()
	for _, o := range []uint32{g.field(l.pcln), g.field(l.pcfile), tree.index} {
		if o != off {
			t.Fatalf("table at %#x, want the run at %#x", o, off)
		}
		if n, bound := countPairs(g, o), int(size/uint64(bad.hdr.quantum))+1; n > bound {
			t.Errorf("a walk of %d zero bytes decodes %d pairs, more than the %d the function's size allows", zeros, n, bound)
		}
	}
	var locs []Location
	for pc := g.Entry(); pc < g.End(); pc++ {
		it := g.rangeIter(off)
		if v, w := bad.pcvalue(off, g.Entry(), pc), it.at(pc); v != w {
			t.Fatalf("pc %#x: pcvalue %d, pcIter %d", pc, v, w)
		}
		if locs, err = g.ResolveLocations(pc, locs); err != nil || len(locs) != 1 || locs[0].Line != 0 {
			t.Fatalf("pc %#x: ResolveLocations = %+v, %v; want the function alone, line unknown", pc, locs, err)
		}
	}
	if n := testing.AllocsPerRun(10, func() { locs, _ = g.ResolveLocations(g.Entry()+size/2, locs) }); n != 0 && !raceEnabled {
		t.Errorf("ResolveLocations over zero runs allocates %v times", n)
	}
}

// TestPCValueAgrees checks the unrolled decoder against the iterator at
// every PC of the sample functions of the newest fuzz base, and that no
// walk decodes more pairs than the function has PCs.
func TestPCValueAgrees(t *testing.T) {
	_, tab, samples := newestInlined(t)
	l := &tab.layout
	for _, smp := range samples {
		f := smp.f
		for _, off := range []uint32{f.field(l.pcln), f.field(l.pcfile), f.field(l.pcsp), smp.tree.index} {
			if n, bound := countPairs(f, off), int((f.End()-f.Entry())/uint64(tab.hdr.quantum))+1; n > bound {
				t.Errorf("%s: table at %#x: %d pairs, more than %d", f.Name(), off, n, bound)
			}
			it := f.rangeIter(off)
			for pc := f.Entry(); pc < f.End() && pc < f.Entry()+4096; pc++ {
				if v, w := tab.pcvalue(off, f.Entry(), pc), it.at(pc); v != w {
					t.Fatalf("%s pc %#x: pcvalue %d, pcIter %d", f.Name(), pc, v, w)
				}
			}
		}
	}
}

// patchParentPC returns a copy of the newest base in which the record of
// the innermost inlined call at an inlined sample PC has parentPC set to
// parent(pc - entry), with that PC and its Table.
func patchParentPC(t *testing.T, parent func(f Function, pcOff uint64) uint32) (*Table, uint64) {
	t.Helper()
	base, tab, samples := newestInlined(t)
	parentPCOff := map[inlKind]uint32{inl112: 16, inl120: 8}[tab.layout.inlKind]
	for _, smp := range samples {
		pc, f, tree := smp.pc, smp.f, smp.tree
		ix := tab.pcvalue(tree.index, f.Entry(), pc)
		if ix < 0 {
			continue
		}
		addr, _ := f.funcdata(tab.layout.funcdataInlTree)
		recAddr := addr + uint64(ix)*uint64(tab.layout.inlRecordSize)
		for sec, h := range base.hdrs {
			if recAddr < h.Addr || recAddr >= h.Addr+uint64(len(base.data[sec])) {
				continue
			}
			var patch [4]byte
			binary.LittleEndian.PutUint32(patch[:], parent(f, pc-f.Entry()))
			bad, err := NewTable(damaged(base, sec, uint32(recAddr-h.Addr)+parentPCOff, patch[:], 0))
			if err != nil {
				t.Fatal(err)
			}
			return bad, pc
		}
	}
	t.Fatal("no inlined PC found to damage")
	return nil, 0
}

// TestInlineWalkStepsDown makes an inlined call's parent PC point at a PC
// of the call itself (a cycle of one) and past the function's end: the
// walk must stop at its first step, with the error that says so, rather
// than walk the cycle to the depth bound, decoding the tables at every
// step (r01).
func TestInlineWalkStepsDown(t *testing.T) {
	for _, tc := range []struct {
		what   string
		parent func(f Function, pcOff uint64) uint32
		msg    string
	}{
		{"cycle", func(f Function, pcOff uint64) uint32 { return uint32(pcOff) }, errTreeOrder},
		{"past the end", func(f Function, pcOff uint64) uint32 { return uint32(f.End() - f.Entry()) }, errBadRecord},
	} {
		bad, pc := patchParentPC(t, tc.parent)
		_, err := bad.ResolveLocations(pc, nil)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Msg != tc.msg {
			t.Errorf("%s: ResolveLocations = %v, want a FormatError %q", tc.what, err, tc.msg)
		}
	}
}

// TestSharedRound3Cases runs the reproducers of issue 21 that damage the
// symbol table (../shared/cases/round3/r01-*, r05-*, r10-* beside the
// repository), when they are there: NewTable fails with ErrCorrupted, or
// a lookup pass over every PC (see lookupPass), a lookup by name and a
// pass over Functions allocate at most four times the input, and no
// Function ends before its entry. TESTING.md ("Hostile input, round 3")
// has their times before and after.
func TestSharedRound3Cases(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector, so pooled scratch memory is allocated again")
	}
	var paths []string
	for _, p := range []string{"r01-*.bin.gz", "r05-*.bin.gz", "r10-*.bin.gz"} {
		m, _ := filepath.Glob("../../shared/cases/round3/" + p)
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Skip("../shared/cases/round3 is not beside the repository (the tests above build the same damage)")
	}
	for _, p := range paths {
		bin := gunzipFile(t, p)
		obj, err := object.NewBytes(bin)
		if err != nil {
			t.Fatal(err)
		}
		var tab *Table
		n := alloctest.Bytes(func() { tab, err = NewTable(obj) })
		if err != nil {
			if !errors.Is(err, ErrCorrupted) || n > 1<<20 {
				t.Errorf("%s: NewTable = %v, allocating %d bytes; want ErrCorrupted", p, err, n)
			}
			t.Logf("%s: %v", filepath.Base(p), err)
			continue
		}
		var lookups, failed, funcs int
		n = alloctest.Bytes(func() {
			lookups, failed = lookupPass(tab)
			tab.LookupFunction("main.main")
			for f, err := range tab.Functions() {
				if err != nil {
					break
				}
				if f.End() < f.Entry() {
					t.Errorf("%s: Functions yields %s with End %#x < Entry %#x", p, f.Name(), f.End(), f.Entry())
				}
				funcs++
			}
		})
		t.Logf("%s: %d functions, %d lookups, %d failed, %d bytes allocated (%.2f × the input)", filepath.Base(p), funcs, lookups, failed, n, float64(n)/float64(len(bin)))
		if n > 4*uint64(len(bin)) {
			t.Errorf("%s: the passes allocated %d bytes, more than 4 × %d", p, n, len(bin))
		}
	}
}

// TestDeepWalkDecodesOnce checks that the first lookup at a PC whose
// inline walk is more than cacheDepth calls deep decodes the function's
// tables into the line cache (so that they are decoded once, not at each
// step; r01), and answers as a Table without a cache does.
func TestDeepWalkDecodesOnce(t *testing.T) {
	_, tab, _ := newestBase(t)
	var deep Function
	var pc uint64
	var locs []Location
search:
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		for p := f.Entry(); p < f.End(); p++ {
			if locs, err = f.ResolveLocations(p, locs); err == nil && len(locs) > cacheDepth+2 {
				deep, pc = f, p
				break search
			}
		}
	}
	if deep.t == nil {
		t.Skipf("no inline walk deeper than %d calls", cacheDepth+1)
	}
	fresh := func(limit int64) *Table {
		m, _, _ := newestBase(t)
		tab, err := NewTable(m)
		if err != nil {
			t.Fatal(err)
		}
		tab.SetLineCacheLimit(limit)
		return tab
	}
	cached, uncached := fresh(DefaultLineCacheLimit), fresh(0)
	got, err := cached.ResolveLocations(pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := uncached.ResolveLocations(pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("pc %#x: %+v, without a cache %+v", pc, got, want)
	}
	if fl := cached.lines.funcs[deep.idx].Load(); fl == nil || fl == seenOnce || fl == uncacheable {
		t.Errorf("%s: a first lookup %d calls deep left the function undecoded", deep.Name(), len(got)-1)
	}
	t.Logf("%s pc %#x: %d frames", deep.Name(), pc, len(got))
}

// FuzzPCValue decodes arbitrary bytes as the pc-value table of a function
// of a given size: no walk may decode more pairs than the function has
// PCs (one per quantum), and the unrolled decoder must agree with the
// iterator everywhere in the function (r01's class: tables whose pairs do
// not advance the PC).
func FuzzPCValue(f *testing.F) {
	_, tab, samples := newestInlined(f)
	for _, smp := range samples[:min(len(samples), 8)] {
		fn := smp.f
		for _, off := range []uint32{fn.field(tab.layout.pcln), smp.tree.index} {
			p := tab.hdr.pctab[off:]
			fuzzseed.Add(f, bytes.Clone(p[:min(len(p), 256)]), uint32(fn.End()-fn.Entry()), uint8(0))
		}
	}
	fuzzseed.Add(f, make([]byte, 256), uint32(32), uint8(0)) // a run of zero pairs, longer than the function
	fuzzseed.Add(f, bytes.Repeat([]byte{0x80}, 8), uint32(16), uint8(1))
	fuzzseed.Add(f, []byte{2, 4, 2, 0, 3, 4, 0}, uint32(100), uint8(2))
	f.Fuzz(func(t *testing.T, table []byte, size uint32, quantum uint8) {
		q := [...]uint32{1, 2, 4}[quantum%3]
		size %= 1 << 16
		tab := &Table{hdr: &header{pctab: append([]byte{0}, table...), quantum: q}}
		const entry = 0x10000
		end := entry + uint64(size)
		pairs := 0
		for it := newPCIter(tab.hdr.pctab, 1, entry, end, q); it.next(); {
			pairs++
		}
		if bound := int(size/q) + 1; pairs > bound {
			t.Fatalf("%d pairs decoded for a function of %d PCs", pairs, bound)
		}
		it := rangeIter{newPCIter(tab.hdr.pctab, 1, entry, end, q)}
		for pc := uint64(entry); pc < end; pc += uint64(size/256 + 1) {
			if v, w := tab.pcvalue(1, entry, pc), it.at(pc); v != w {
				t.Fatalf("pc %#x: pcvalue %d, pcIter %d", pc, v, w)
			}
		}
	})
}
