package gosym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// TestPclntabOfModuledata checks that a binary whose pclntab has neither a
// section nor symbols of its own (an externally linked PIE, such as
// Debian's dockerd, keeps it in .data.rel.ro) gets it from
// runtime.firstmoduledata, not by a scan of the data: the test program
// with its .gopclntab section and its pclntab symbols renamed answers
// like the original, from the same table.
func TestPclntabOfModuledata(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxAMD64)
	// ".gopclntab", "runtime.pclntab", "runtime.epclntab" end so.
	if bytes.Count(bin, []byte("pclntab\x00")) < 3 {
		t.Fatal("the test program has no pclntab section and symbols to rename")
	}
	renamed := bytes.ReplaceAll(bin, []byte("pclntab\x00"), []byte("pclntaX\x00"))
	want, got := mustTable(t, bin), mustTable(t, renamed)
	gi, wi := got.Info(), want.Info()
	if gi.FoundBy != "symbol runtime.firstmoduledata" {
		t.Errorf("pclntab found by %q, want symbol runtime.firstmoduledata", gi.FoundBy)
	}
	if gi.PclntabAddr != wi.PclntabAddr || gi.PclntabSize > wi.PclntabSize || gi.NumFuncs != wi.NumFuncs {
		t.Errorf("pclntab at %#x, %d bytes, %d functions; want %#x, at most %d, %d",
			gi.PclntabAddr, gi.PclntabSize, gi.NumFuncs, wi.PclntabAddr, wi.PclntabSize, wi.NumFuncs)
	}
	var wl, gl []Location
	for _, pc := range samplePCs(t, want, 2000) {
		var err1, err2 error
		wl, err1 = want.ResolveLocations(pc, wl)
		gl, err2 = got.ResolveLocations(pc, gl)
		if err1 != nil || err2 != nil || !slices.Equal(wl, gl) {
			t.Fatalf("pc %#x: %v, %v; want %v, %v", pc, gl, err2, wl, err1)
		}
	}
}

// TestOpenAllocationsBySymbol is TestOpenAllocations for binaries whose
// tables Open finds by symbol: the test program and the go command (13
// times more symbols) with their .gopclntab and .go.module sections and
// their pclntab symbols renamed, so that Open looks up
// runtime.firstmoduledata for both the pclntab and the moduledata. The
// allocations must be the same: no symbol map, nothing per symbol.
func TestOpenAllocationsBySymbol(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goCmd, err := os.ReadFile(benchBinary(t, "go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	allocs := map[string]float64{}
	for name, bin := range map[string][]byte{"test program": objtest.Binary(t, objtest.LinuxAMD64), "go": goCmd} {
		bin = bytes.ReplaceAll(bin, []byte("pclntab\x00"), []byte("pclntaX\x00"))
		bin = bytes.ReplaceAll(bin, []byte(".go.module\x00"), []byte(".go.modulX\x00"))
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, bin, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if in := tab.Info(); in.FoundBy != "symbol runtime.firstmoduledata" || in.ModuledataFoundBy != "symbol runtime.firstmoduledata" {
			t.Errorf("%s: pclntab found by %q, moduledata by %q; want both by symbol runtime.firstmoduledata", name, in.FoundBy, in.ModuledataFoundBy)
		}
		tab.Close()
		allocs[name] = testing.AllocsPerRun(10, func() {
			tab, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tab.Close()
		})
	}
	if allocs["test program"] != allocs["go"] {
		t.Errorf("Open allocates %v times for the test program, %v for go", allocs["test program"], allocs["go"])
	}
	t.Logf("Open allocates %v times", allocs["go"])
}

// TestModuledataScanOrder checks that the scan for the moduledata reads
// the no-pointer data, where the linkers put runtime.firstmoduledata,
// before the other writable sections: each page it reads costs a page
// fault in a freshly mapped file, and hugo's .data (355 KB) comes first.
// A Go 1.20 binary whose firstmoduledata symbol is renamed, with a copy of
// the moduledata at the start of .data and the headers of .data and
// .noptrdata swapped (as an external linker orders them), finds the one in
// .noptrdata.
func TestModuledataScanOrder(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(entries, func(e testcorpus.Entry) bool { return e.Name == "go1.20.14.linux-amd64" })
	if i < 0 {
		t.Skip("go1.20.14.linux-amd64 is not in the corpus")
	}
	bin, err := entries[i].Binary()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == "runtime.firstmoduledata" })
	data, noptr := ef.Section(".data"), ef.Section(".noptrdata")
	if j < 0 || data == nil || noptr == nil || data.Offset%8 != 0 {
		t.Fatal("no runtime.firstmoduledata, .data or .noptrdata")
	}
	md := syms[j]
	off := noptr.Offset + (md.Value - noptr.Addr)
	patched := bytes.Clone(bin)
	copy(patched[data.Offset:data.Offset+md.Size], bin[off:off+md.Size])
	patched = bytes.ReplaceAll(patched, []byte("runtime.firstmoduledata\x00"), []byte("runtime.firstmoduledatX\x00"))
	di, ni := slices.Index(ef.Sections, data), slices.Index(ef.Sections, noptr)
	if di > ni {
		const shdrSize = 64
		shoff := binary.LittleEndian.Uint64(bin[40:])
		a, b := patched[shoff+uint64(di)*shdrSize:][:shdrSize], patched[shoff+uint64(ni)*shdrSize:][:shdrSize]
		tmp := bytes.Clone(a)
		copy(a, b)
		copy(b, tmp)
	}
	got, want := mustTable(t, patched), mustTable(t, bin)
	if by := got.Info().ModuledataFoundBy; by != "scan of section .noptrdata" {
		t.Errorf("moduledata found by %q, want scan of section .noptrdata", by)
	}
	var wl, gl []Location
	for _, pc := range samplePCs(t, want, 500) {
		wl, _ = want.ResolveLocations(pc, wl)
		gl, _ = got.ResolveLocations(pc, gl)
		if !slices.Equal(wl, gl) {
			t.Fatalf("pc %#x: %v, want %v", pc, gl, wl)
		}
	}
}

// lookupCounter is an object whose symbol lookups are recorded.
type lookupCounter struct {
	object.Object
	names []string
}

func (c *lookupCounter) LookupSymbol(name string) (object.Symbol, error) {
	c.names = append(c.names, name)
	return c.Object.(object.SymbolLookup).LookupSymbol(name)
}

// TestOpenLookups checks which symbols NewTable looks up in a binary whose
// pclntab has neither a section nor symbols of its own (each lookup reads
// pages of the symbol table: page faults, in a freshly mapped file): the
// end of the pclntab only where its start was found, then
// runtime.firstmoduledata for the pclntab (the test program's moduledata
// is in .go.module); fewer than the lookups after which a symbol map is
// made (objfile's directLookups, 8).
func TestOpenLookups(t *testing.T) {
	bin := bytes.ReplaceAll(objtest.Binary(t, objtest.LinuxAMD64), []byte("pclntab\x00"), []byte("pclntaX\x00"))
	obj, err := object.NewBytes(bin)
	if err != nil {
		t.Fatal(err)
	}
	c := &lookupCounter{Object: obj}
	if _, err := NewTable(c); err != nil {
		t.Fatal(err)
	}
	want := []string{"runtime.pclntab", "pclntab", "runtime.firstmoduledata"}
	if !slices.Equal(c.names, want) {
		t.Errorf("NewTable looks up %q, want %q", c.names, want)
	}
}

// TestGofuncSamplesNear checks that the moduledata check of Open
// (checkGofunc) reads few pages: its samples are functions among the
// first of the functab, whose inline trees lie within 64 KB (the
// kernel's fault-around window), in the test program and the go
// command. It still refuses every funcdata base a moduledata layout with
// a word added or removed near gofunc gives: the words around it.
func TestGofuncSamplesNear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	tabs := map[string]*Table{"test program": mustTable(t, objtest.Binary(t, objtest.LinuxStripped))}
	goCmd, err := Open(benchBinary(t, "go"))
	if err != nil {
		t.Fatal(err)
	}
	defer goCmd.Close()
	tabs["go"] = goCmd
	for name, tab := range tabs {
		var buf [4 * validateSample]gofuncSample
		s, _ := tab.gofuncSamples(&buf)
		if len(s) != quickSample {
			t.Errorf("%s: %d samples, want %d", name, len(s), quickSample)
			continue
		}
		for j, c := range s {
			if j > 0 && c.addr == s[j-1].addr {
				t.Errorf("%s: functions %d and %d share their sampled tree", name, s[j-1].i, c.i)
			}
			if c.i >= gofuncWindow*quickSample {
				t.Errorf("%s: sample function %d, want one of the first %d", name, c.i, gofuncWindow*quickSample)
			}
		}
		if span := s[len(s)-1].addr - s[0].addr; span > 64<<10 {
			t.Errorf("%s: sampled trees span %d bytes, want at most 64 KB", name, span)
		}
		if err := tab.checkGofunc(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		md := moduledataWords(t, tab)
		gofunc, at := tab.gofunc, moduledataLayoutFor(tab.layout.minor).gofunc
		if md[at] != gofunc {
			t.Fatalf("%s: moduledata word %d is %#x, not gofunc %#x", name, at, md[at], gofunc)
		}
		for w := at - 3; w <= at+3; w++ {
			if md[w] == gofunc {
				continue
			}
			tab.gofunc = md[w]
			if err := tab.checkGofunc(); !errors.Is(err, ErrCorrupted) || !strings.Contains(err.Error(), "does not locate the inline trees of") {
				t.Errorf("%s: gofunc from moduledata word %d (%#x): %v; want ErrCorrupted", name, w, md[w], err)
			}
		}
		tab.gofunc = gofunc
	}
}

// moduledataWords returns the words of the .go.module section (Go 1.26+)
// of tab's object.
func moduledataWords(t *testing.T, tab *Table) []uint64 {
	secs, err := tab.obj.Sections()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(secs, func(s object.SectionHeader) bool { return s.Name == ".go.module" })
	if i < 0 {
		t.Skip("no .go.module section")
	}
	b, err := tab.obj.SectionData(i)
	if err != nil {
		t.Fatal(err)
	}
	var w []uint64
	for ; len(b) >= 8; b = b[8:] {
		w = append(w, tab.hdr.rd.ptr(b))
	}
	return w
}

// TestGofuncSamplesSpread checks the gofunc check of a table with few
// inline trees among its first functions: the test program with the
// inline tree index of its first functions' records zeroed (as for
// functions nothing was inlined into) is sampled at functions spread over
// the table, and still refuses the funcdata bases of the moduledata words
// around gofunc.
func TestGofuncSamplesSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := objtest.Binary(t, objtest.LinuxStripped)
	orig := mustTable(t, bin)
	l := orig.layout
	window := uint64(gofuncWindow * quickSample)
	if orig.hdr.nfunc <= window || l.inlKind == inlNone {
		t.Skipf("%d functions, inline kind %v", orig.hdr.nfunc, l.inlKind)
	}
	off, _, bo := elfPclntab(t, bin)
	funcs := off + uint64(len(orig.data)-len(orig.hdr.funcs))
	b := slices.Clone(bin)
	for i := range window {
		roff, ok := orig.funcOffAt(i)
		rec := orig.hdr.funcs[roff:]
		if !ok || uint64(l.pcdataInlIndex) >= uint64(bo.Uint32(rec[l.npcdata:])) {
			continue
		}
		bo.PutUint32(b[funcs+roff+uint64(l.fixedSize+4*l.pcdataInlIndex):], 0)
	}
	tab := mustTable(t, b)
	var buf [4 * validateSample]gofuncSample
	s, _ := tab.gofuncSamples(&buf)
	if len(s) < 3 {
		t.Fatalf("%d samples, want at least 3", len(s))
	}
	n := tab.hdr.nfunc
	for _, c := range s {
		if c.i < window || !slices.ContainsFunc([]uint64{0, 1, 2, 3, 4, 5, 6, 7}, func(j uint64) bool { return c.i == j*(n-1)/(quickSample-1) }) {
			t.Errorf("sample function %d, want one of %d spread over the %d", c.i, quickSample, n)
		}
	}
	if err := tab.checkGofunc(); err != nil {
		t.Fatal(err)
	}
	md := moduledataWords(t, tab)
	gofunc, at := tab.gofunc, moduledataLayoutFor(tab.layout.minor).gofunc
	for w := at - 3; w <= at+3; w++ {
		if md[w] == gofunc {
			continue
		}
		tab.gofunc = md[w]
		if err := tab.checkGofunc(); !errors.Is(err, ErrCorrupted) {
			t.Errorf("gofunc from moduledata word %d (%#x): %v; want ErrCorrupted", w, md[w], err)
		}
	}
}
