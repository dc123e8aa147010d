package lidia

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

func TestLookupDoesNotAllocate(t *testing.T) {
	tab := selfTable(t)
	r := newReader(t, writeBytes(t, tab))
	pcs := samplePCs(t, tab, 2000)
	dst := make([]gosym.Location, 0, 64)
	run := func() {
		for _, pc := range pcs {
			var err error
			if dst, err = r.Lookup(pc, dst); err != nil || len(dst) == 0 {
				t.Fatalf("Lookup(%#x) = %v, %v", pc, dst, err)
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(10, run); n != 0 {
		t.Errorf("Lookup allocates %v times per run of %d PCs", n, len(pcs))
	}
}

// TestConcurrentLookup looks up from 8 goroutines on one Reader made by
// Open (a mapping, where the OS has it; run with -race), then uses the
// strings after Close.
func TestConcurrentLookup(t *testing.T) {
	tab := selfTable(t)
	path := filepath.Join(t.TempDir(), "self.lidia")
	if err := os.WriteFile(path, writeBytes(t, tab), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, WithCRC())
	if err != nil {
		t.Fatal(err)
	}
	pcs := samplePCs(t, tab, 4000)
	want := make([][]gosym.Location, len(pcs))
	for i, pc := range pcs {
		want[i], _ = tab.ResolveLocations(pc, nil)
	}
	results := make([][]gosym.Location, len(pcs))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []gosym.Location
			for i := g; i < len(pcs); i += 8 {
				var err error
				if dst, err = r.Lookup(pcs[i], dst); err != nil {
					t.Error(err)
					return
				}
				results[i] = append([]gosym.Location(nil), dst...)
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := r.Lookup(pcs[0], nil); err != ErrClosed {
		t.Errorf("Lookup after Close: %v, want ErrClosed", err)
	}
	// The strings outlive the mapping.
	for i := range pcs {
		if !sameFrames(results[i], want[i]) {
			t.Fatalf("pc %#x: concurrent %v, want %v", pcs[i], results[i], want[i])
		}
	}
}

// TestOptions writes the go1.26.8 and go1.11.13 corpus binaries (call
// sites as PCs, and in the inline tree) with each option turned off, and
// reads a full file with each reader option turned off: Lookup must give
// ResolveLocations' frames without lines, without files, or only the last
// (physical) frame, at every PC.
func TestOptions(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if (e.GoVersion == "go1.26.8" || e.GoVersion == "go1.11.13") && e.Variant == "default" {
			n++
			t.Run(e.Name, func(t *testing.T) {
				t.Parallel()
				testOptions(t, entryTable(t, e))
			})
		}
	}
	if n != 2 {
		t.Errorf("%d corpus entries, want 2", n)
	}
}

func testOptions(t *testing.T, tab *gosym.Table) {
	full := writeBytes(t, tab)
	type config struct {
		lines, files, inlines bool
	}
	opts := func(c config) []Option {
		return []Option{WithLines(c.lines), WithFiles(c.files), WithInlines(c.inlines)}
	}
	type reader struct {
		config
		name string
		r    *Reader
	}
	var readers []reader
	for _, c := range []config{
		{false, true, true}, {true, false, true}, {true, true, false}, {false, false, false},
	} {
		written := writeBytes(t, tab, opts(c)...)
		checkLayout(t, tab, written)
		if len(written) >= len(full) {
			t.Errorf("%+v: file of %d bytes, full one %d", c, len(written), len(full))
		}
		t.Logf("%+v: %d bytes (all: %d)", c, len(written), len(full))
		readers = append(readers,
			reader{c, "written", newReader(t, written)},
			reader{c, "read", newReader(t, full, opts(c)...)})
	}
	var all, want []gosym.Location
	var got []gosym.Location
	var err error
	for _, f := range functions(t, tab) {
		for pc := f.Entry(); pc < f.End(); pc++ {
			all, _ = f.ResolveLocations(pc, all)
			for _, r := range readers {
				want = append(want[:0], all...)
				if !r.inlines {
					want = want[len(want)-1:]
				}
				for i := range want {
					if !r.lines {
						want[i].Line = 0
					}
					if !r.files {
						want[i].File = ""
					}
				}
				got, err = r.r.Lookup(pc, got)
				if err != nil || !sameFrames(got, want) {
					t.Fatalf("%+v %s: pc %#x: %v, %v; want %v", r.config, r.name, pc, got, err, want)
				}
			}
		}
	}
}

// padding reports whether locs, from ResolveLocations, is the position of
// alignment padding: one frame, without file or line.
func padding(locs []gosym.Location) bool {
	return len(locs) == 1 && locs[0].File == "" && locs[0].Line == 0
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); !errors.Is(err, ErrCorrupted) {
		t.Errorf("Open of an empty file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, bytes.Repeat([]byte{1}, 4096), 0o644)
	if _, err := Open(bad); !errors.Is(err, ErrCorrupted) {
		t.Errorf("Open of a bad file: %v", err)
	}
}

// TestCorrupt damages a small file in many ways: opening must fail with
// ErrCorrupted (allocating next to nothing, whatever the counts claim), or
// Lookup must return frames or ErrCorrupted; nothing panics.
func TestCorrupt(t *testing.T) {
	data := smallFile(t)
	if _, err := NewReader(data, WithCRC()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, data)
	addrs := fileAddrs(r)

	set := func(off int, v uint64) []byte {
		d := bytes.Clone(data)
		le.PutUint64(d[off:], v)
		return d
	}
	for name, d := range map[string][]byte{
		"short":           data[:headerSize-1],
		"magic":           set(hMagic, 0x6169646c),
		"version":         set(hVersion, 2<<32|2),
		"VA width":        set(hVAWidth, 2),
		"range width":     set(hRangeWidth, 16),
		"line width":      set(hLineWidth, 8),
		"count mismatch":  set(hRangeCount, le.Uint64(data[hVACount:])+1),
		"VA count":        set(hVACount, 1<<62),
		"range offset":    set(hRangeOffset, uint64(len(data))),
		"strings size":    set(hStrSize, uint64(len(data))),
		"strings offset":  set(hStrOffset, ^uint64(0)),
		"line count":      set(hLineCount, 1<<61),
		"truncated table": data[:len(data)-1],
	} {
		var err error
		n := alloctest.Bytes(func() { _, err = NewReader(d) })
		if !errors.Is(err, ErrCorrupted) {
			t.Errorf("%s: NewReader: %v", name, err)
		}
		// Bounded by a constant, not by the field: 64 KiB leaves room for
		// what other goroutines of the test process allocate meanwhile
		// (alloctest counts them; once, under the heavy phase, 6,408
		// bytes against an earlier bound of 4 KiB).
		if n > 64<<10 {
			t.Errorf("%s: NewReader allocated %d bytes", name, n)
		}
	}

	// A flipped byte in each table fails the CRC check.
	for _, tab := range []struct {
		name string
		off  int
	}{{"VA", hVAOffset}, {"range", hRangeOffset}, {"strings", hStrOffset}, {"line", hLineOffset}} {
		d := bytes.Clone(data)
		d[le.Uint64(d[tab.off:])+1] ^= 0x40
		if _, err := NewReader(d, WithCRC()); !errors.Is(err, ErrCorrupted) {
			t.Errorf("%s table damaged: NewReader with CRC: %v", tab.name, err)
		}
		if _, err := NewReader(d); err != nil {
			t.Errorf("%s table damaged: NewReader without CRC: %v", tab.name, err)
		}
	}

	// Bad references in range entries reach Lookup.
	rng := int(le.Uint64(data[hRangeOffset:]))
	for _, k := range []int{fFunc, fFile, fLineIdx, fLineCount, fCallFile, fCallLine} {
		for i := range r.n {
			d := bytes.Clone(data)
			le.PutUint32(d[rng+(i*numFields+k)*4:], 0xfffffff0)
			dr, err := NewReader(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range addrs {
				if fr, err := dr.Lookup(a, nil); err != nil && !errors.Is(err, ErrCorrupted) && !errors.Is(err, gosym.ErrPCNotFound) {
					t.Fatalf("field %d of range %d: Lookup(%#x) = %v, %v", k, i, a, fr, err)
				}
			}
		}
	}
	// Every byte of the file, damaged in turn.
	for i := range data {
		d := bytes.Clone(data)
		d[i] ^= 0xff
		lookupAll(t, d, addrs)
	}
}

// lookupAll opens data and looks up addrs, failing on an error that does
// not wrap ErrCorrupted. (A panic fails the test by itself.)
func lookupAll(t testing.TB, data []byte, addrs []uint64) {
	r, err := NewReader(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupted) {
			t.Fatalf("NewReader: %v", err)
		}
		return
	}
	var dst []gosym.Location
	for _, a := range append(addrs, fileAddrs(r)...) {
		if dst, err = r.Lookup(a, dst); err != nil && !errors.Is(err, ErrCorrupted) && !errors.Is(err, gosym.ErrPCNotFound) {
			t.Fatalf("Lookup(%#x): %v", a, err)
		}
		if r.nodes == nil && len(dst) > maxWalk {
			// The walk reads at most maxWalk ranges.
			t.Fatalf("Lookup(%#x): %d frames from the walk", a, len(dst))
		}
	}
}

// fileAddrs returns addresses around the ranges of r (at most 64 ranges).
func fileAddrs(r *Reader) []uint64 {
	addrs := []uint64{0, ^uint64(0)}
	for i := range min(r.n, 64) {
		va := r.vaAt(i)
		n := r.field(r.rec(i), fLength)
		addrs = append(addrs, va-1, va, va+n/2, va+n-1, va+n)
	}
	return addrs
}

// smallFile writes a few functions of the test binary that have inlined
// calls, two deep.
func smallFile(tb testing.TB) []byte {
	tb.Helper()
	tab := selfTable(tb)
	b := newBuilder(makeOptions(nil), 8)
	var locs []gosym.Location
	n := 0
	for _, f := range functions(tb, tab) {
		if f.End()-f.Entry() > 400 {
			continue
		}
		deep := false
		for pc := f.Entry(); pc < f.End() && !deep; pc++ {
			locs, _ = f.ResolveLocations(pc, locs)
			deep = len(locs) >= 3
		}
		if !deep {
			continue
		}
		if err := b.addFunction(f); err != nil {
			tb.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if n == 0 {
		tb.Fatal("no function with inlined calls")
	}
	var buf bytes.Buffer
	if err := b.writeTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteDeterministic(t *testing.T) {
	tab := selfTable(t)
	a, b := writeBytes(t, tab), writeBytes(t, tab)
	if !bytes.Equal(a, b) {
		t.Error("two writes differ")
	}
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

var errWrite = errors.New("write failed")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errWrite
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	tab := selfTable(t)
	size := len(writeBytes(t, tab))
	for _, n := range []int{0, 100, size / 2, size - 1} {
		if err := Write(&failWriter{n}, tab); err != errWrite {
			t.Errorf("failing after %d bytes: %v", n, err)
		}
	}
}

// TestWideTables writes ranges whose values need the wide layouts: VAs
// above 4 GiB (as Mach-O text on 64-bit targets) and lines and offsets
// above 65535.
func TestWideTables(t *testing.T) {
	b := newBuilder(makeOptions(nil), 1)
	base := uint64(0x1_0000_1000)
	f, file := b.str("main.big"), b.str("big.go")
	idx, n := b.lineTable([]lineEntry{{0, 7}, {0x12000, 70000}})
	b.recs.add(record{va: base, length: 0x20000, fn: f, file: file, lineIdx: idx, lineCount: n})
	g := b.str("main.inlined")
	idx, n = b.lineTable([]lineEntry{{0, 3}})
	b.recs.add(record{va: base + 0x13000, length: 0x10, depth: 1, fn: g, file: file, lineIdx: idx, lineCount: n, callFile: file, call: 70001})
	var buf bytes.Buffer
	if err := b.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if vaW, lW := le.Uint64(data[hVAWidth:]), le.Uint64(data[hLineWidth:]); vaW != 8 || lW != 4 {
		t.Fatalf("VA width %d, line width %d; want 8 and 4", vaW, lW)
	}
	r := newReader(t, data)
	for _, c := range []struct {
		addr uint64
		want []gosym.Location
	}{
		{base - 1, nil},
		{base, []gosym.Location{{Function: "main.big", File: "big.go", Line: 7}}},
		{base + 0x12000, []gosym.Location{{Function: "main.big", File: "big.go", Line: 70000}}},
		{base + 0x13008, []gosym.Location{{Function: "main.inlined", File: "big.go", Line: 3}, {Function: "main.big", File: "big.go", Line: 70001}}},
		{base + 0x1ffff, []gosym.Location{{Function: "main.big", File: "big.go", Line: 70000}}},
		{base + 0x20000, nil},
	} {
		got, err := lookup(r, c.addr, nil)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Lookup(%#x) = %v, %v; want %v", c.addr, got, err, c.want)
		}
	}
	// Past every range: no frame, and the error gosym's lookups give.
	if got, err := r.Lookup(base+0x20000, nil); len(got) != 0 || !errors.Is(err, gosym.ErrPCNotFound) {
		t.Errorf("Lookup(%#x) = %v, %v; want gosym.ErrPCNotFound", base+0x20000, got, err)
	}
	p, err := openPyro(bytes.NewReader(data), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Lookup(nil, base+0x13008); len(got) != 2 || got[0].FunctionName != "main.inlined" || got[1].FunctionName != "main.big" {
		t.Errorf("Pyroscope's walk: %v", got)
	}
}

// TestIndexLimits checks the edges of the index of a nested file
// (nestindex.go) on hand-built files: a line table whose first entry
// starts after its range's VA, a piece with many line entries, ranges 5
// GiB apart (the gap is left out of the index), and ranges that cover more
// than 4 GiB, which the index cannot hold and Lookup walks instead.
func TestIndexLimits(t *testing.T) {
	const base = 0x40_0000
	build := func(far uint64, hLen uint32) []byte {
		b := newBuilder(makeOptions(nil), 2)
		file := b.str("a.go")
		var lines []lineEntry
		for k := range uint32(24) {
			lines = append(lines, lineEntry{0x10 + 4*k, 100 + k})
		}
		idx, n := b.lineTable(lines) // nothing in effect at [base, base+0x10)
		b.recs.add(record{va: base, length: 0x100, fn: b.str("main.f"), file: file, lineIdx: idx, lineCount: n})
		idx, n = b.lineTable([]lineEntry{{0, 7}})
		b.recs.add(record{va: base + 0x20, length: 0x8, depth: 1, fn: b.str("main.g"), file: file, lineIdx: idx, lineCount: n, callFile: file, call: 42})
		idx, n = b.lineTable([]lineEntry{{0, 9}})
		b.recs.add(record{va: base + far, length: hLen, fn: b.str("main.h"), file: file, lineIdx: idx, lineCount: n})
		var buf bytes.Buffer
		if err := b.writeTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, c := range []struct {
		far  uint64
		hLen uint32
		segs int // 0: no index, Lookup walks
	}{{0x1000, 0x10, 1}, {5 << 30, 0x10, 2}, {0x200, 0xffff_ff00, 0}} {
		r := newReader(t, build(c.far, c.hLen))
		if (r.nodes != nil) != (c.segs > 0) || len(r.segs) != c.segs {
			t.Errorf("far %#x: index %v with %d segments, want %d segments", c.far, r.nodes != nil, len(r.segs), c.segs)
		}
		for _, l := range []struct {
			addr uint64
			want []gosym.Location
		}{
			{base - 1, nil},
			{base, []gosym.Location{{Function: "main.f", File: "a.go", Line: 0}}},
			{base + 0xf, []gosym.Location{{Function: "main.f", File: "a.go", Line: 0}}},
			{base + 0x10, []gosym.Location{{Function: "main.f", File: "a.go", Line: 100}}},
			{base + 0x1f, []gosym.Location{{Function: "main.f", File: "a.go", Line: 103}}},
			{base + 0x20, []gosym.Location{{Function: "main.g", File: "a.go", Line: 7}, {Function: "main.f", File: "a.go", Line: 42}}},
			{base + 0x28, []gosym.Location{{Function: "main.f", File: "a.go", Line: 106}}},
			{base + 0x6b, []gosym.Location{{Function: "main.f", File: "a.go", Line: 122}}},
			{base + 0xff, []gosym.Location{{Function: "main.f", File: "a.go", Line: 123}}},
			{base + 0x100, nil},
			{base + c.far - 1, nil},
			{base + c.far, []gosym.Location{{Function: "main.h", File: "a.go", Line: 9}}},
			{base + c.far + uint64(c.hLen) - 1, []gosym.Location{{Function: "main.h", File: "a.go", Line: 9}}},
			{base + c.far + uint64(c.hLen), nil},
		} {
			want := l.want
			if c.segs == 0 && len(want) == 2 {
				// The walk gives each frame its own range's file and line.
				want = []gosym.Location{want[0], {Function: "main.f", File: "a.go", Line: 104}}
			}
			if got, err := lookup(r, l.addr, nil); err != nil || !slices.Equal(got, want) {
				t.Errorf("far %#x: Lookup(%#x) = %v, %v; want %v", c.far, l.addr, got, err, want)
			}
		}
	}
}

// TestEmptyLineTable checks that a range with no line entries has line 0
// wherever its line-table index points, as Pyroscope's reader (which reads
// no lines) takes it, in a file that nests and in one that does not.
func TestEmptyLineTable(t *testing.T) {
	for _, depth := range []uint32{0, 1} { // depth 1 at the VA of depth 1: no nesting
		b := newBuilder(makeOptions(nil), 1)
		b.recs.add(record{va: 0x1000, length: 0x10, depth: depth, fn: b.str("main.f"), file: b.str("f.go"), lineIdx: 5})
		var buf bytes.Buffer
		if err := b.writeTo(&buf); err != nil {
			t.Fatal(err)
		}
		r := newReader(t, buf.Bytes())
		if (r.nodes != nil) != (depth == 0) {
			t.Errorf("depth %d: index %v", depth, r.nodes != nil)
		}
		if got, err := r.Lookup(0x1008, nil); err != nil || !slices.Equal(got, []gosym.Location{{Function: "main.f", File: "f.go", Line: 0}}) {
			t.Errorf("depth %d (index %v): Lookup = %v, %v", depth, r.nodes != nil, got, err)
		}
	}
}

// TestSentinels checks that lidia's errors are also the general ones:
// damage is gosym.ErrCorrupted, a closed Reader's error fs.ErrClosed.
func TestSentinels(t *testing.T) {
	if _, err := NewReader([]byte("not a lidia file")); !errors.Is(err, ErrCorrupted) || !errors.Is(err, gosym.ErrCorrupted) {
		t.Errorf("NewReader of garbage: %v", err)
	}
	r := newReader(t, writePyro([]pyroRange{{VA: 0x1000, Length: 0x10, Function: "f"}}, true, true))
	r.Close()
	if _, err := r.Lookup(0x1000, nil); !errors.Is(err, ErrClosed) || !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Lookup after Close: %v", err)
	}
}
