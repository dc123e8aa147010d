package plan9obj

import (
	"bytes"
	"encoding/binary"
	"testing"

	p9 "debug/plan9obj"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// backend describes this package to the shared tests of objtest.
var backend = objtest.Backend[*p9.File]{Parse: p9.NewFile, NewBytes: NewBytes, New: New}

func TestTargets(t *testing.T) {
	backend.Run(t, objtest.Plan9, func(t *testing.T, tg objtest.Target, o *objtest.Opened[*p9.File]) {
		pf := o.Std
		for _, obj := range o.Objects() {
			hs, err := obj.Sections()
			if err != nil {
				t.Fatal(err)
			}
			// Sizes and offsets as debug/plan9obj has them.
			for _, s := range pf.Sections {
				i := objtest.FindSection(hs, s.Name)
				if i < 0 {
					t.Errorf("no section %q", s.Name)
					continue
				}
				h := hs[i]
				if h.Size != uint64(s.Size) || h.FileSize != uint64(s.Size) || h.Offset != uint64(s.Offset) {
					t.Errorf("section %q = %+v; want size %#x at %#x", s.Name, h, s.Size, s.Offset)
				}
				want, _ := s.Data()
				if got, err := obj.SectionData(i); err != nil || !bytes.Equal(got, want) {
					t.Errorf("SectionData(%d) (%q) = %d bytes, %v; want %d bytes", i, s.Name, len(got), err, len(want))
				}
			}
			if len(hs) != 6 || hs[bssSect].Name != "bss" || hs[bssSect].Size != uint64(pf.Bss) || hs[bssSect].FileSize != 0 {
				t.Errorf("sections %+v: want 6, bss of size %#x", hs, pf.Bss)
			}
			if hs[textSect].Addr != pf.LoadAddress+pf.HdrSize {
				t.Errorf("text at %#x, want %#x", hs[textSect].Addr, pf.LoadAddress+pf.HdrSize)
			}
			objtest.CheckTarget(t, obj, "plan9", tg)
			checkAddresses(t, obj, pf.PtrSize)
		}
		objtest.CheckBytes(t, o.Data, o.FromBytes)
	})
}

// checkAddresses checks the section addresses against the linker's symbols:
// the pclntab is in text, moduledata in data, and moduledata's first word
// points at the pclntab.
func checkAddresses(t *testing.T, obj object.Object, ptrSize int) {
	t.Helper()
	text := objtest.CheckSymbolIn(t, obj, "runtime.text", object.SectionAlloc|object.SectionExec)
	hs, _ := obj.Sections()
	if text.Addr != hs[textSect].Addr && text.Addr != (hs[textSect].Addr+31)&^31 {
		t.Errorf("runtime.text at %#x, text section at %#x", text.Addr, hs[textSect].Addr)
	}
	pcln := objtest.CheckSymbolIn(t, obj, "runtime.pclntab", object.SectionAlloc|object.SectionExec)
	objtest.PclntabAt(t, obj, pcln.Addr)
	md := objtest.CheckSymbolIn(t, obj, "runtime.firstmoduledata", object.SectionAlloc|object.SectionWrite)
	data, _ := obj.SectionData(dataSect)
	off := md.Addr - hs[dataSect].Addr
	if off+8 > uint64(len(data)) {
		t.Fatalf("runtime.firstmoduledata at %#x is beyond the data", md.Addr)
	}
	ptr := uint64(binary.LittleEndian.Uint32(data[off:]))
	if ptrSize == 8 {
		ptr = binary.LittleEndian.Uint64(data[off:])
	}
	if ptr != pcln.Addr {
		t.Errorf("moduledata.pcHeader = %#x, want runtime.pclntab %#x", ptr, pcln.Addr)
	}
	for _, name := range []string{"runtime.bss", "runtime.end"} {
		s, err := obj.(object.SymbolLookup).LookupSymbol(name)
		want := hs[bssSect].Addr
		if name == "runtime.end" {
			want += hs[bssSect].Size
		}
		if err != nil || s.Addr != want {
			t.Errorf("%s = %#x, %v; want %#x", name, s.Addr, err, want)
		}
	}
}

// wantSymbols returns from debug/plan9obj the text, data and bss symbols,
// in table order (see objtest.Backend.RunSymbols).
func wantSymbols(t *testing.T, pf *p9.File) []object.Symbol {
	t.Helper()
	syms, err := pf.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var want []object.Symbol
	for _, s := range syms {
		if bytes.ContainsRune([]byte("TtLlDdBb"), s.Type) {
			want = append(want, object.Symbol{Name: s.Name, Addr: s.Value})
		}
	}
	return want
}

func TestSymbols(t *testing.T) {
	backend.RunSymbols(t, objtest.Plan9, wantSymbols)
}

func TestCorrupt(t *testing.T) {
	orig := objtest.Binary(t, objtest.Plan9AMD64)
	be := binary.BigEndian
	patch := objtest.Patcher(orig)
	hs, _ := backend.MustNewBytes(t, orig).Sections()
	symsOff := hs[symsSect].Offset
	withSyms := func(tab ...byte) []byte {
		b := append(bytes.Clone(orig[:symsOff]), tab...)
		be.PutUint32(b[16:], uint32(len(tab)))
		return b
	}
	files := []objtest.Corrupt{
		{Name: "empty"},
		{Name: "magic", Data: orig[:4]},
		{Name: "short header", Data: orig[:36]},
		{Name: "bad magic", Data: patch(func(b []byte) { be.PutUint32(b, 0x8a98) })},
		{Name: "header only", Data: orig[:40], WantOpen: true},
		{Name: "huge text", Data: patch(func(b []byte) { be.PutUint32(b[4:], 0xffffffff) }), WantOpen: true},
		{Name: "huge syms", Data: patch(func(b []byte) { be.PutUint32(b[16:], 0xffffffff) }), WantOpen: true},
		{Name: "truncated symbols", Data: orig[:symsOff+1000], WantOpen: true},
		{Name: "symbol type only", Data: withSyms(0, 0, 0, 0, 0, 0, 0, 1, 'T'|0x80), WantOpen: true},
		{Name: "unterminated name", Data: withSyms(0, 0, 0, 0, 0, 0, 0, 1, 'T'|0x80, 'a', 'b'), WantOpen: true},
		{Name: "file name", Data: withSyms(0, 0, 0, 0, 0, 0, 0, 1, 'z'|0x80, 0, 0, 1, 0, 0), WantOpen: true},
	}
	objtest.RunCorrupt(t, files, NewBytes, nil)
}

// Indexes of the sections (see the package documentation).
const (
	textSect = iota
	dataSect
	bssSect
	symsSect
)

// TestUnterminatedNames checks that a symbol table whose names are not
// NUL-terminated (round 3, r03) costs no more than its size: the first
// name runs to the end of the table, the only symbol, or, without a NUL
// at the end, an error.
func TestUnterminatedNames(t *testing.T) {
	data := objtest.Binary(t, objtest.Plan9AMD64)
	hs, _ := backend.MustNewBytes(t, data).Sections()
	i := objtest.FindSection(hs, "syms")
	if i < 0 {
		t.Fatal("no syms section")
	}
	counts := objtest.CheckNamesBounded(t, data, hs[i].Offset, hs[i].FileSize, NewBytes)
	if counts[0] > 1 || counts[1] != 0 {
		t.Errorf("Symbols yields %v symbols, want at most 1, then 0", counts)
	}
}
