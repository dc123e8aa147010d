package xcoffobj

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func TestTargets(t *testing.T) {
	objtest.Run(t, objtest.XCOFF, func(t *testing.T, tg objtest.Target, data []byte) {
		obj, err := NewBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		objtest.CheckBytes(t, data, obj)
		objtest.CheckTarget(t, obj, "xcoff", tg)
		// The sections as the Go linker writes them (asmbXcoff in
		// cmd/link/internal/ld/xcoff.go), checked against the header
		// fields read here with encoding/binary.
		hs, _ := obj.Sections()
		want := sectionTable(t, data)
		if len(hs) != len(want) {
			t.Fatalf("%d sections, want %d", len(hs), len(want))
		}
		for i, h := range hs {
			w := want[i]
			if h.Name != w.Name || h.Addr != w.Addr || h.Size != w.Size || h.Offset != w.Offset || h.FileSize != w.FileSize || h.Flags != w.Flags {
				t.Errorf("section %d = %+v, want %+v", i, h, w)
			}
		}
		for _, name := range []string{".text", ".data", ".bss"} {
			if objtest.FindSection(hs, name) < 0 {
				t.Errorf("no section %s", name)
			}
		}
		if tg.Name == objtest.AIXStripped.Name {
			if _, err := obj.(object.SymbolLookup).LookupSymbol("runtime.text"); err == nil {
				t.Error("a stripped file has symbols")
			}
			return
		}
		checkAddresses(t, obj)
	})
}

// sectionTable reads the XCOFF64 section table of data, as the format
// specifies it (AIX's <scnhdr.h>), for the test's comparison.
func sectionTable(t *testing.T, data []byte) []object.SectionHeader {
	t.Helper()
	be := binary.BigEndian
	if be.Uint16(data) != 0x01f7 {
		t.Fatalf("magic %#x, want XCOFF64", be.Uint16(data))
	}
	n := int(be.Uint16(data[2:]))
	off := 24 + int(be.Uint16(data[16:]))
	var hs []object.SectionHeader
	for i := range n {
		sh := data[off+72*i:]
		h := object.SectionHeader{
			Name: strings.TrimRight(string(sh[:8]), "\x00"),
			Addr: be.Uint64(sh[16:]), Size: be.Uint64(sh[24:]), Offset: be.Uint64(sh[32:]),
		}
		h.FileSize = h.Size
		switch be.Uint32(sh[64:]) & 0xffff {
		case 0x20: // STYP_TEXT
			h.Flags = object.SectionAlloc | object.SectionExec
		case 0x40: // STYP_DATA
			h.Flags = object.SectionAlloc | object.SectionWrite
		case 0x80: // STYP_BSS
			h.Flags = object.SectionAlloc | object.SectionWrite
			h.FileSize = 0
		}
		hs = append(hs, h)
	}
	return hs
}

// checkAddresses checks the sections against the linker's symbols: text
// starts .text, the pclntab is in .text (with the read-only data),
// moduledata in .data, and moduledata's first word points at the
// pclntab.
func checkAddresses(t *testing.T, obj object.Object) {
	t.Helper()
	hs, _ := obj.Sections()
	text := objtest.CheckSymbolIn(t, obj, "runtime.text", object.SectionAlloc|object.SectionExec)
	if i := objtest.FindSection(hs, ".text"); text.Addr != hs[i].Addr {
		t.Errorf("runtime.text at %#x, .text at %#x", text.Addr, hs[i].Addr)
	}
	pcln := objtest.CheckSymbolIn(t, obj, "runtime.pclntab", object.SectionAlloc|object.SectionExec)
	objtest.PclntabAt(t, obj, pcln.Addr)
	md := objtest.CheckSymbolIn(t, obj, "runtime.firstmoduledata", object.SectionAlloc|object.SectionWrite)
	i := objtest.FindSection(hs, ".data")
	data, _ := obj.SectionData(i)
	if off := md.Addr - hs[i].Addr; off+8 > uint64(len(data)) {
		t.Errorf("runtime.firstmoduledata at %#x is beyond .data", md.Addr)
	} else if ptr := binary.BigEndian.Uint64(data[off:]); ptr != pcln.Addr {
		t.Errorf("moduledata.pcHeader = %#x, want runtime.pclntab %#x", ptr, pcln.Addr)
	}
	if md.Size == 0 {
		t.Error("runtime.firstmoduledata has size 0")
	}
}

// TestSymbols compares LookupSymbol with go tool nm, which reads XCOFF
// with the standard library's internal/xcoff: the address of the first
// symbol of each name, and the size of data and bss symbols (nm prints
// the csect length, which for a function is the index of its csect).
func TestSymbols(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	path := objtest.Path(t, objtest.AIXPPC64)
	out, err := exec.Command(goCmd, "tool", "nm", "-size", "-sort=none", path).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	obj, err := NewBytes(objtest.Binary(t, objtest.AIXPPC64))
	if err != nil {
		t.Fatal(err)
	}
	l := obj.(object.SymbolLookup)
	seen := map[string]bool{}
	checked, sized := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "addr size type name", the name possibly with spaces.
		m := nmLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("go tool nm line %q", sc.Text())
		}
		f := m[1:]
		if f[2] == "U" || seen[f[3]] {
			continue
		}
		seen[f[3]] = true
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("go tool nm line %q", sc.Text())
		}
		s, err := l.LookupSymbol(f[3])
		if err != nil || s.Addr != addr {
			t.Errorf("LookupSymbol(%q) = %+v, %v; go tool nm: %#x", f[3], s, err, addr)
			continue
		}
		checked++
		if strings.ContainsAny(f[2], "DdBb") {
			sized++
			if s.Size != size {
				t.Errorf("LookupSymbol(%q).Size = %d, go tool nm: %d", f[3], s.Size, size)
			}
		}
	}
	if checked < 1000 || sized < 100 {
		t.Errorf("only %d symbols (%d sized) checked", checked, sized)
	}
	t.Logf("%d symbols agree with go tool nm, %d of them with a size", checked, sized)
	if _, err := l.LookupSymbol("runtime.nosuchsymbol"); err == nil {
		t.Error("a missing symbol was found")
	}
	if s, err := l.LookupSymbol("main.work"); err != nil || s.Size == 0 {
		t.Errorf("main.work = %+v, %v; want a function size", s, err)
	}
}

var nmLine = regexp.MustCompile(`^\s*([0-9a-f]*)\s+(\d+)\s+(\S) (.*)$`)

func TestCorrupt(t *testing.T) {
	orig := objtest.Binary(t, objtest.AIXPPC64)
	be := binary.BigEndian
	patch := objtest.Patcher(orig)
	symoff := be.Uint64(orig[8:])
	files := []objtest.Corrupt{
		{Name: "empty"},
		{Name: "magic", Data: orig[:2]},
		{Name: "short header", Data: orig[:20]},
		{Name: "bad magic", Data: patch(func(b []byte) { be.PutUint16(b, 0x01f6) })},
		{Name: "headers only", Data: orig[:24+120+72*3]},
		{Name: "many sections", Data: patch(func(b []byte) { be.PutUint16(b[2:], 0xffff) })},
		{Name: "huge section", Data: patch(func(b []byte) { be.PutUint64(b[24+120+24:], 1<<63) }), WantOpen: true},
		{Name: "huge symbol count", Data: patch(func(b []byte) { be.PutUint32(b[20:], 0xffffffff) }), WantOpen: true},
		{Name: "symbols beyond the file", Data: patch(func(b []byte) { be.PutUint64(b[8:], 1<<62) }), WantOpen: true},
		{Name: "truncated symbols", Data: orig[:symoff+1000], WantOpen: true},
		{Name: "huge string table", Data: patch(func(b []byte) {
			be.PutUint32(b[symoff+uint64(be.Uint32(b[20:]))*18:], 0xffffffff)
		}), WantOpen: true},
		{Name: "32-bit header", Data: patch(func(b []byte) { be.PutUint16(b, 0x01df) }), WantOpen: true},
	}
	objtest.RunCorrupt(t, files, NewBytes, nil)
}

// TestUnterminatedNames checks that a string table whose names all run to
// its end (round 3, r03) costs its size once, not once for each symbol,
// and that names without a NUL are left out.
func TestUnterminatedNames(t *testing.T) {
	data := objtest.Binary(t, objtest.AIXPPC64)
	be := binary.BigEndian
	// XCOFF64: f_symptr at 8, f_nsyms at 20; the string table follows
	// the symbols, a 4-byte length (which counts itself), then the names.
	start := be.Uint64(data[8:]) + uint64(be.Uint32(data[20:]))*18
	size := uint64(be.Uint32(data[start:]))
	counts := objtest.CheckNamesBounded(t, data, start+4, size-4, NewBytes)
	if counts[0] < 100 || counts[1] != 0 {
		t.Errorf("Symbols yields %d symbols whose names run to the end, %d without a NUL; want 100 or more, 0", counts[0], counts[1])
	}
}
