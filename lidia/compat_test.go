package lidia

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
)

// compareWithPyro checks that Lookup and Pyroscope's walk agree on the
// functions of every frame at each address, and on the files of every frame
// (allFiles) or of the innermost where it has a line: in a file whose
// ranges nest, Lookup takes an outer frame's file from the call site, and
// reports no file at alignment padding (line 0).
// lookup is r.Lookup with an address that no range covers answered as
// Pyroscope's reader answers it: no frame, no error.
func lookup(r *Reader, addr uint64, buf []gosym.Location) ([]gosym.Location, error) {
	got, err := r.Lookup(addr, buf)
	if len(got) == 0 && errors.Is(err, gosym.ErrPCNotFound) {
		err = nil
	}
	return got, err
}

func compareWithPyro(t *testing.T, data []byte, addrs []uint64, allFiles bool) {
	t.Helper()
	r := newReader(t, data)
	p, err := openPyro(bytes.NewReader(data), true)
	if err != nil {
		t.Fatal(err)
	}
	var got []gosym.Location
	var pf []pyroFrame
	for _, a := range addrs {
		got, err = lookup(r, a, got)
		if err != nil {
			t.Fatalf("Lookup(%#x): %v", a, err)
		}
		pf = p.Lookup(pf, a)
		same := len(got) == len(pf)
		for i := 0; same && i < len(got); i++ {
			same = got[i].Function == pf[i].FunctionName && (got[i].File == pf[i].FilePath || (!allFiles && (i > 0 || got[i].Line == 0)))
		}
		if !same {
			t.Fatalf("addr %#x: Lookup %v, Pyroscope %v", a, got, pf)
		}
	}
}

// TestUpstreamExample builds the file Pyroscope writes for a shared library
// with an undefined import and one function.
func TestUpstreamExample(t *testing.T) {
	data := writePyro([]pyroRange{
		{VA: 0x1139, Length: 0x20, Function: "fib"},
		{VA: 0, Length: 0, Function: "__cxa_finalize"},
	}, true, true)
	for _, c := range []struct {
		name      string
		off, want uint64
	}{
		{"range offset", hRangeOffset, 0x88},
		{"strings offset", hStrOffset, 0xc8},
		{"strings size", hStrSize, 43},
		{"lines offset", hLineOffset, 0xf3},
	} {
		if got := le.Uint64(data[c.off:]); got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, got, c.want)
		}
	}
	if len(data) != 243 {
		t.Errorf("file of %d bytes, want 243", len(data))
	}
	var addrs []uint64
	for a := uint64(0); a < 0x1200; a++ {
		addrs = append(addrs, a)
	}
	compareWithPyro(t, data, addrs, true)
	r := newReader(t, data)
	if got, _ := r.Lookup(0x1140, nil); len(got) != 1 || got[0] != (gosym.Location{Function: "fib"}) {
		t.Errorf("Lookup(0x1140) = %v, want fib", got)
	}
	if got, _ := r.Lookup(0, nil); len(got) != 0 {
		t.Errorf("Lookup(0) = %v, want nothing (a zero-length range stops the walk)", got)
	}
}

// upstreamRanges returns what Pyroscope's CreateLidiaFromELF makes of a Go
// binary: a symbol-table range per function (symbol size, so without
// the padding, and ".abi0" names for some), zero-length markers and an
// undefined import, then a pclntab range per function (up to the next
// entry), all at depth 0 without files or lines.
func upstreamRanges(tb testing.TB, tab *gosym.Table) []pyroRange {
	var sym, pcln []pyroRange
	var lr []gosym.FunctionLine
	var err error
	fns := functions(tb, tab)
	sym = append(sym,
		pyroRange{VA: 0, Length: 0, Function: "__cxa_finalize"},
		pyroRange{VA: fns[0].Entry(), Length: 0, Function: "runtime.text"})
	for i, f := range fns {
		if lr, err = f.Lines(lr); err != nil {
			tb.Fatal(err)
		}
		size := f.End() - f.Entry()
		if fl := lr; len(fl) > 1 && fl[len(fl)-1].File == "" {
			size = fl[len(fl)-1].PCLo - f.Entry()
		}
		name := f.Name()
		if i%7 == 0 {
			name += ".abi0"
		}
		sym = append(sym, pyroRange{VA: f.Entry(), Length: uint32(size), Function: name})
		pcln = append(pcln, pyroRange{VA: f.Entry(), Length: uint32(f.End() - f.Entry()), Function: f.Name()})
	}
	return append(sym, pcln...)
}

// TestReadUpstreamFile reads a file shaped like Pyroscope's own output for
// the test binary: duplicates at every VA, zero-length ranges. Lookup must
// agree with Pyroscope's walk everywhere, and give the pclntab name.
func TestReadUpstreamFile(t *testing.T) {
	tab := selfTable(t)
	data := writePyro(upstreamRanges(t, tab), true, true)
	r := newReader(t, data)
	if r.nodes != nil {
		t.Fatal("duplicate ranges read as nested")
	}
	fns := functions(t, tab)
	addrs := []uint64{0, 1, fns[0].Entry() - 1, fns[len(fns)-1].End(), fns[len(fns)-1].End() + 100}
	for _, f := range fns {
		addrs = append(addrs, f.Entry(), f.End()-1, (f.Entry()+f.End())/2)
	}
	addrs = append(addrs, samplePCs(t, tab, 20000)...)
	compareWithPyro(t, data, addrs, true)
	var got []gosym.Location
	for _, f := range fns[1:] {
		got, _ = r.Lookup(f.Entry(), got)
		if len(got) != 1 || got[0].Function != f.Name() || got[0].File != "" || got[0].Line != 0 {
			t.Fatalf("Lookup(%#x) = %v, want %s", f.Entry(), got, f.Name())
		}
	}
}

// decodeRanges reads the ranges of a file back, with their line tables.
func decodeRanges(tb testing.TB, r *Reader) []pyroRange {
	tb.Helper()
	str := func(off uint64) string {
		s, ok := r.str(off)
		if !ok {
			tb.Fatalf("bad string offset %#x", off)
		}
		return s
	}
	var out []pyroRange
	for i := range r.n {
		rec := r.rec(i)
		p := pyroRange{
			VA:       r.vaAt(i),
			Length:   uint32(r.field(rec, fLength)),
			Depth:    uint32(r.field(rec, fDepth)),
			Function: str(r.field(rec, fFunc)),
			File:     str(r.field(rec, fFile)),
			CallFile: str(r.field(rec, fCallFile)),
			CallLine: uint32(r.field(rec, fCallLine)),
		}
		idx, n := r.field(rec, fLineIdx), r.field(rec, fLineCount)
		for j := idx; j < idx+n; j++ {
			if r.lW == 2 {
				p.Lines = append(p.Lines, lineEntry{uint32(le.Uint16(r.lines[4*j:])), uint32(le.Uint16(r.lines[4*j+2:]))})
			} else {
				p.Lines = append(p.Lines, lineEntry{le.Uint32(r.lines[8*j:]), le.Uint32(r.lines[8*j+4:])})
			}
		}
		out = append(out, p)
	}
	return out
}

// TestReadUpstreamLayoutWithInlines writes our ranges (inline ranges,
// files, lines) through the upstream builder, which lays the file out its
// own way ("[overflow]" string, one line table per range in order, its own
// width rules), and in the widest layout the format allows; Lookup must
// read them as it reads our own file. The ranges are shuffled first: the
// builder's stable sort by (VA, depth) must restore their order.
func TestReadUpstreamLayoutWithInlines(t *testing.T) {
	tab := selfTable(t)
	ours := newReader(t, writeBytes(t, tab))
	ranges := decodeRanges(t, ours)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(ranges), func(i, j int) { ranges[i], ranges[j] = ranges[j], ranges[i] })
	up := writePyro(ranges, true, true)
	if le.Uint64(up[hVAWidth:]) != 4 || le.Uint64(up[hRangeWidth:]) != 4 {
		t.Fatal("expected the narrow layout")
	}
	wide := widen(t, up)
	pcs := samplePCs(t, tab, 20000)
	for name, data := range map[string][]byte{"upstream": up, "wide": wide} {
		r := newReader(t, data)
		if r.nodes == nil {
			t.Fatalf("%s: ranges not read as nested", name)
		}
		var want, got []gosym.Location
		for _, pc := range pcs {
			want, _ = ours.Lookup(pc, want)
			got, _ = r.Lookup(pc, got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: pc %#x: %v, our file gives %v", name, pc, got, want)
			}
		}
		compareWithPyro(t, data, pcs[:2000], false)
	}
}

// widen rewrites a file with every table at its widest: 8-byte VAs and
// range fields, 4-byte line fields.
func widen(tb testing.TB, data []byte) []byte {
	r, err := NewReader(data)
	if err != nil {
		tb.Fatal(err)
	}
	var va, rng, ln []byte
	for i := range r.n {
		va = appendN(va, 8, r.vaAt(i))
		for k := range numFields {
			rng = appendN(rng, 8, r.field(r.rec(i), k))
		}
	}
	for j := range r.nl {
		if r.lW == 2 {
			ln = appendN(ln, 4, uint64(le.Uint16(r.lines[4*j:])))
			ln = appendN(ln, 4, uint64(le.Uint16(r.lines[4*j+2:])))
		} else {
			ln = append(ln, r.lines[8*j:8*j+8]...)
		}
	}
	strs := r.strs
	h := bytes.Clone(data[:headerSize])
	le.PutUint64(h[hVAWidth:], 8)
	le.PutUint64(h[hRangeWidth:], 8)
	le.PutUint64(h[hLineWidth:], 4)
	le.PutUint64(h[hRangeOffset:], headerSize+uint64(len(va)))
	le.PutUint64(h[hStrOffset:], headerSize+uint64(len(va)+len(rng)))
	le.PutUint64(h[hLineOffset:], headerSize+uint64(len(va)+len(rng)+len(strs)))
	for _, c := range []struct {
		at  int
		tab []byte
	}{{hVACRC, va}, {hRangeCRC, rng}, {hStrCRC, strs}, {hLineCRC, ln}} {
		le.PutUint32(h[c.at:], crc32c(c.tab))
	}
	return bytes.Join([][]byte{h, va, rng, strs, ln}, nil)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// TestPyroscopeQuirks checks, on hand-built files, that Lookup follows
// Pyroscope's walk where ranges do not nest: a zero-length range
// inside a function blocks lookups after it, a gap gives nothing even if an
// earlier range covers the address, and two covering ranges at one depth
// both give frames.
func TestPyroscopeQuirks(t *testing.T) {
	cases := map[string][]pyroRange{
		"zero-length inside": {
			{VA: 0x100, Length: 0x100, Function: "f", File: "f.go"},
			{VA: 0x180, Length: 0, Function: "marker"},
		},
		"too small": {
			{VA: 0x100, Length: 0x100, Function: "f"},
			{VA: 0x120, Length: 0x10, Function: "g"},
		},
		"same depth": {
			{VA: 0x100, Length: 0x100, Function: "f"},
			{VA: 0x110, Length: 0x40, Depth: 1, Function: "a", File: "a.go"},
			{VA: 0x120, Length: 0x40, Depth: 1, Function: "b", File: "b.go"},
		},
		"orphan inline": {
			{VA: 0x100, Length: 0x10, Function: "f"},
			{VA: 0x120, Length: 0x40, Depth: 2, Function: "a"},
		},
	}
	var addrs []uint64
	for a := uint64(0xf0); a < 0x220; a++ {
		addrs = append(addrs, a)
	}
	for name, ranges := range cases {
		t.Run(name, func(t *testing.T) {
			data := writePyro(ranges, true, true)
			compareWithPyro(t, data, addrs, true)
			if r := newReader(t, data); r.nodes != nil {
				t.Error("read as nested")
			}
		})
	}
	r := newReader(t, writePyro(cases["zero-length inside"], true, true))
	if got, _ := r.Lookup(0x190, nil); len(got) != 0 {
		t.Errorf("after a zero-length range: %v, want nothing", got)
	}
	if got, _ := r.Lookup(0x170, nil); len(got) != 1 || got[0].File != "f.go" {
		t.Errorf("before a zero-length range: %v, want f", got)
	}
}

// TestOurFileLooksUpstream checks the parts of our layout that Pyroscope's
// reader depends on but does not check.
func TestOurFileLooksUpstream(t *testing.T) {
	tab := selfTable(t)
	data := writeBytes(t, tab)
	r := newReader(t, data)
	if off := le.Uint64(data[hVAOffset:]); off != headerSize {
		t.Errorf("VA table at %#x", off)
	}
	if got := le.Uint64(data[hLineOffset:]) + r.nl*2*uint64(r.lW); got != uint64(len(data)) {
		t.Errorf("tables end at %#x, file at %#x", got, len(data))
	}
	ranges := decodeRanges(t, r)
	depth0 := 0
	for i, p := range ranges {
		if p.Length == 0 {
			t.Fatalf("range %d is empty", i)
		}
		if p.Depth == 0 {
			depth0++
		}
		if p.Depth > 0 && p.CallFile == "" {
			t.Errorf("range %d (%s at depth %d) has no call file", i, p.Function, p.Depth)
		}
	}
	t.Logf("%d ranges, %d at depth 0, %d functions", len(ranges), depth0, len(functions(t, tab)))
}
