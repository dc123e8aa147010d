package gosym

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

// fileLine is a line of a file.
type fileLine struct {
	file string
	line uint32
}

// indexedLines returns every copy of every line the line index of tab
// holds, by file (in the order of their ids), line and PC: it decodes
// every file.
func indexedLines(t testing.TB, tab *Table) []fileLine {
	t.Helper()
	x, err := tab.lineIndex()
	if err != nil {
		t.Fatal(err)
	}
	var all []fileLine
	for id, name := range x.files {
		fl := x.fileLines(tab, uint32(id))
		if fl.err != nil || fl.scan {
			t.Fatalf("%s: lines not kept (%v)", name, fl.err)
		}
		for _, c := range fl.copies {
			all = append(all, fileLine{name, c.line})
		}
	}
	return all
}

// TestLinePCsSharedLineTable builds the class of issue 21's r04: many
// long functions sharing one pc-line table that starts a new line at every
// byte. The former index kept every copy of every line of every function
// (functions × table length: gigabytes from a 2.4 MB file). The index
// must allocate no more than a small multiple of the table's size, still
// find the line in every function, and bound its work by the table's size.
func TestLinePCsSharedLineTable(t *testing.T) {
	loadFuzzBases(t)
	base := fuzzBases.objs[len(fuzzBases.objs)-1] // Go 1.26: u32 entry offsets
	tab, err := NewTable(base)
	if err != nil {
		t.Fatal(err)
	}
	if tab.layout.entryIsPtr || tab.hdr.magic == magic12 {
		t.Fatal("the newest base has pointer entries")
	}
	// Up to k functions of the unit that has the most, which will share
	// the bomb.
	byCU := map[uint32][]uint32{}
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if cu := f.field(tab.layout.cuOffset); cu != math.MaxUint32 {
			byCU[cu] = append(byCU[cu], f.idx)
		}
	}
	var bombed []uint32
	for _, cu := range slices.Sorted(maps.Keys(byCU)) {
		if len(byCU[cu]) > len(bombed) {
			bombed = byCU[cu]
		}
	}
	const k = 64
	bombed = bombed[:min(len(bombed), k)]
	// Every function is stretched to size bytes; the bombed ones get a
	// pcfile table of file 0 over all of it and a pcln table of lines
	// 0, 1, 2, ... n-1, one byte each, at the end of the pctab.
	const size = 1 << 16
	q := uint64(tab.hdr.quantum)
	n := min(size/q, uint64(len(tab.hdr.pctab))/16) // damaging the tables of few functions
	var pcln, pcfile []byte
	for range n {
		pcln = append(pcln, 2, 1) // zig-zag +1, one quantum
	}
	pcln = append(pcln, 0)
	pcfile = binary.AppendUvarint(append(pcfile, 2), size/q)
	pcfile = append(pcfile, 0)
	lnOff := uint32(len(tab.hdr.pctab) - len(pcln))
	fileOff := lnOff - uint32(len(pcfile))
	put := base.order.PutUint32
	m := &memObject{order: base.order, hdrs: base.hdrs}
	for _, d := range base.data {
		orig := d
		d = slices.Clone(d)
		if at, ok := offsetIn(orig, tab.hdr.pctab); ok {
			copy(d[at+uint64(lnOff):], pcln)
			copy(d[at+uint64(fileOff):], pcfile)
		}
		if at, ok := offsetIn(orig, tab.hdr.functab); ok {
			for i := range tab.hdr.nfunc + 1 {
				put(d[at+8*i:], uint32(i*size))
			}
		}
		if at, ok := offsetIn(orig, tab.hdr.funcs); ok {
			for i := range tab.hdr.nfunc {
				f, _, err := tab.funcAt(i)
				if err != nil {
					t.Fatal(err)
				}
				put(d[at+uint64(f.off):], uint32(i*size))
				// Tables the bomb overwrote are dropped (an inline
				// index table would name records out of range).
				for _, o := range []int{tab.layout.pcfile, tab.layout.pcln, tab.layout.fixedSize + 4*tab.layout.pcdataInlIndex} {
					if o < tab.layout.fixedSize+4*int(f.field(tab.layout.npcdata)) && f.field(o) >= fileOff {
						put(d[at+uint64(f.off)+uint64(o):], 0)
					}
				}
			}
			for _, i := range bombed {
				f, _, _ := tab.funcAt(uint64(i))
				put(d[at+uint64(f.off)+uint64(tab.layout.pcfile):], fileOff)
				put(d[at+uint64(f.off)+uint64(tab.layout.pcln):], lnOff)
			}
		}
		m.data = append(m.data, d)
	}
	bomb, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	f0, _, err := bomb.funcAt(uint64(bombed[0]))
	if err != nil {
		t.Fatal(err)
	}
	file, line := f0.fileName(0), uint32(n/2)
	t.Logf("%d functions of %d bytes share a table of %d lines in %s; pclntab %d bytes", len(bombed), size, n, file, len(bomb.data))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pcs, err := bomb.LinePCs(file, line, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("first LinePCs: %d PCs, %d bytes allocated (%.1f× the pclntab)", len(pcs), alloc, float64(alloc)/float64(len(bomb.data)))
	// The index keeps at most lineIndexLimit(pclntab) = 2× its size (at
	// least 1 MB) of lines; decoding takes less than as much again in
	// temporary copies. The former index allocated 144 MB here, 250×.
	if bound := 8 * uint64(lineIndexLimit(len(bomb.data))); alloc > bound {
		t.Errorf("first LinePCs allocated %d bytes, more than %d", alloc, bound)
	}
	// Every bombed function holds the line, at its entry + line quanta.
	got := map[uint64]bool{}
	for _, p := range pcs {
		got[p.PC] = true
	}
	for _, i := range bombed {
		f, _, _ := bomb.funcAt(uint64(i))
		if pc := f.Entry() + uint64(line)*q; !got[pc] {
			t.Errorf("%s: no PC %#x for %s:%d", f.Name(), pc, file, line)
		}
	}
	// The answer is the scan a user would write over every function's
	// Lines.
	var want []LinePC
	var lr []FunctionLine
	for f, err := range bomb.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if lr, err = f.Lines(lr); err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, l := range lr {
			if l.File == file && l.Line == line && !seen[l.Call] {
				seen[l.Call] = true
				want = append(want, LinePC{PC: l.PCLo, Func: f, Function: l.Function})
			}
		}
	}
	slices.SortFunc(want, func(a, b LinePC) int { return cmp.Compare(a.PC, b.PC) })
	if !slices.Equal(pcs, want) {
		t.Errorf("LinePCs(%s, %d) = %d PCs, the scan of Lines %d", file, line, len(pcs), len(want))
	}
	// Later queries decode the functions again, in memory reused.
	allocs := testing.AllocsPerRun(1, func() {
		if pcs, err = bomb.LinePCs(file, line+1, pcs); err != nil || len(pcs) < len(bombed) {
			t.Fatal(pcs, err)
		}
	})
	if allocs > 4 {
		t.Errorf("a later LinePCs allocates %.0f times", allocs)
	}

	// The work is bounded too: a step that would decode more ranges than
	// walkLimit fails. Here the first LinePCs walks the pcfile tables
	// (a few thousand pairs); the query then needs len(bombed)×n ranges.
	for _, c := range []struct {
		limit int64
		step  string
	}{{1000, "first LinePCs"}, {int64(len(bombed)) * int64(n) / 2, "first query of the file"}} {
		limited, err := NewTable(m)
		if err != nil {
			t.Fatal(err)
		}
		limited.byLine.walkLimit = c.limit
		_, err = limited.LinePCs(file, line, nil)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Msg != errLineWork || !errors.Is(err, ErrCorrupted) {
			t.Errorf("%s decoding at most %d ranges: %v, want %q", c.step, c.limit, err, errLineWork)
		}
		if c.limit > 1000 && limited.byLine.start == nil {
			t.Errorf("%s decoding at most %d ranges: the first LinePCs failed", c.step, c.limit)
		}
	}
}

// TestLinePCsUnkept checks that queries of files whose lines the index
// does not keep (its limit spent), and queries without postings (too many
// of them), answer as those of kept files.
func TestLinePCsUnkept(t *testing.T) {
	kept := selfTable(t)
	all := indexedLines(t, kept)
	variants := []struct {
		name  string
		every int // query 1 in every of the queries: without postings, each file's first query walks every function
		set   func(*lineIndex)
	}{
		{"unkept", 1, func(x *lineIndex) { x.limit = 0 }},
		{"unposted", 8, func(x *lineIndex) { x.start, x.funcs = nil, nil }},
	}
	for _, v := range variants {
		tab := selfTable(t)
		x, err := tab.lineIndex()
		if err != nil {
			t.Fatal(err)
		}
		v.set(x)
		// From several goroutines, for -race: the files are decoded
		// concurrently, and given up.
		const goroutines = 4
		step := max(len(all)/2000, 1) * v.every
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var a, b []LinePC
				var err error
				for i := g * step; i < len(all); i += goroutines * step {
					q := all[i]
					if a, err = kept.LinePCs(q.file, q.line, a); err != nil {
						t.Error(err)
						return
					}
					if b, err = tab.LinePCs(q.file, q.line, b); err != nil {
						t.Error(err)
						return
					}
					if len(a) == 0 || !slices.EqualFunc(a, b, func(a, b LinePC) bool {
						return a.PC == b.PC && a.Function == b.Function && a.Func.Entry() == b.Func.Entry()
					}) {
						t.Errorf("LinePCs(%s, %d): kept %v, %s %v", q.file, q.line, a, v.name, b)
						return
					}
					for _, l := range []uint32{q.line, q.line + 1} {
						na, erra := kept.NextLine(q.file, l)
						nb, errb := tab.NextLine(q.file, l)
						if na != nb || erra != nil || errb != nil {
							t.Errorf("NextLine(%s, %d): kept %d, %v; %s %d, %v", q.file, l, na, erra, v.name, nb, errb)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		for id := range x.files {
			if fl := x.lines[id].Load(); v.name == "unkept" && fl != nil && !fl.scan {
				t.Fatalf("%s: lines kept beyond the limit", x.files[id])
			}
		}
	}
}

// FuzzLinePCs damages tables as FuzzTable does and checks LinePCs against
// Function.Lines: every copy of a line that Lines gives in the functions
// of the sample PCs is found, at its lowest PC, with the same name, by a
// Table that keeps the lines of its files and by one that keeps none; or
// both fail alike, with an error wrapping ErrCorrupted.
func FuzzLinePCs(f *testing.F) {
	loadFuzzBases(f)
	for i := range fuzzBases.objs {
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(0), []byte{}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(1234), []byte{0x80, 0x80, 0x80}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(54321), []byte{0x7f, 0x13, 0x00}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(2), uint32(4321), []byte{0xff, 0xff, 0x00, 0x01}, uint32(0))
	}
	f.Fuzz(func(t *testing.T, which, target uint8, off uint32, patch []byte, trunc uint32) {
		obj, pcs := fuzzInput(which, target, off, patch, trunc)
		if obj == nil {
			return
		}
		kept, err := NewTable(obj)
		if err != nil {
			return
		}
		unkept, _ := NewTable(obj)
		if x, err := unkept.lineIndex(); err == nil {
			x.limit = 0
		}
		var lr []FunctionLine
		var a, b []LinePC
		for _, pc := range pcs[:min(len(pcs), 8)] {
			fn, err := kept.ResolveFunction(pc)
			if err != nil {
				continue
			}
			if lr, err = fn.Lines(lr); err != nil {
				continue
			}
			type copyKey struct {
				file       string
				line, call int
			}
			seen := map[copyKey]bool{}
			for _, l := range lr {
				k := copyKey{l.File, int(l.Line), l.Call}
				if l.File == "" || l.Line == 0 || seen[k] {
					continue
				}
				if seen[k] = true; len(seen) > 32 {
					break
				}
				var errA, errB error
				a, errA = kept.LinePCs(l.File, l.Line, a)
				b, errB = unkept.LinePCs(l.File, l.Line, b)
				if fmt.Sprint(errA) != fmt.Sprint(errB) || !slices.EqualFunc(a, b, func(a, b LinePC) bool {
					return a.PC == b.PC && a.Function == b.Function && a.Func.Entry() == b.Func.Entry()
				}) {
					t.Fatalf("LinePCs(%s, %d): kept %v %v, unkept %v %v", l.File, l.Line, a, errA, b, errB)
				}
				if errA != nil {
					if !errors.Is(errA, ErrCorrupted) {
						t.Fatalf("LinePCs(%s, %d): %v", l.File, l.Line, errA)
					}
					continue
				}
				if !slices.ContainsFunc(a, func(p LinePC) bool {
					return p.PC == l.PCLo && p.Function == l.Function && p.Func.Entry() == fn.Entry()
				}) {
					t.Fatalf("LinePCs(%s, %d) = %v: no %#x (%s) in %s", l.File, l.Line, pcsOf(a), l.PCLo, l.Function, fn.Name())
				}
			}
		}
	})
}
