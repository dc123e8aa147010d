package peobj

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// backend describes this package to the shared tests of objtest.
var backend = objtest.Backend[*pe.File]{Parse: pe.NewFile, NewBytes: NewBytes, New: New}

func imageBase(pf *pe.File) uint64 {
	switch oh := pf.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		return uint64(oh.ImageBase)
	case *pe.OptionalHeader64:
		return oh.ImageBase
	}
	return 0
}

// wantSections computes from debug/pe what Sections must return.
func wantSections(pf *pe.File) []object.SectionHeader {
	var want []object.SectionHeader
	for _, s := range pf.Sections {
		h := object.SectionHeader{
			Name:     s.Name,
			Addr:     imageBase(pf) + uint64(s.VirtualAddress),
			Size:     uint64(s.VirtualSize),
			Offset:   uint64(s.Offset),
			FileSize: uint64(min(s.VirtualSize, s.Size)),
		}
		c := s.Characteristics
		h.Flags = objtest.Flags(c&pe.IMAGE_SCN_MEM_DISCARDABLE == 0, c&pe.IMAGE_SCN_MEM_EXECUTE != 0, c&pe.IMAGE_SCN_MEM_WRITE != 0)
		want = append(want, h)
	}
	return want
}

func TestTargets(t *testing.T) {
	backend.Run(t, objtest.PE, func(t *testing.T, tg objtest.Target, o *objtest.Opened[*pe.File]) {
		want := wantSections(o.Std)
		for _, obj := range o.Objects() {
			objtest.CheckSections(t, obj, want)
			objtest.CompareData(t, obj, func(i int) ([]byte, error) {
				b, err := o.Std.Sections[i].Data()
				return b[:want[i].FileSize], err
			})
			objtest.CheckTarget(t, obj, "pe", tg)
			checkAddresses(t, obj, tg.GOARCH == "amd64")
		}
		objtest.CheckBytes(t, o.Data, o.FromBytes)
		// Long names come from the string table.
		if objtest.FindSection(want, ".zdebug_info") < 0 && objtest.FindSection(want, ".debug_info") < 0 {
			t.Errorf("no DWARF section with a long name")
		}
	})
}

// checkAddresses checks the section addresses against the linker's symbols:
// the pclntab is in .rdata, moduledata in .data, and moduledata's first
// word points at the pclntab.
func checkAddresses(t *testing.T, obj object.Object, is64 bool) {
	t.Helper()
	hs, _ := obj.Sections()
	pcln := objtest.CheckSymbolIn(t, obj, "runtime.pclntab", object.SectionAlloc)
	objtest.PclntabAt(t, obj, pcln.Addr)
	if i := objtest.FindSection(hs, ".rdata"); pcln.Addr < hs[i].Addr || pcln.Addr >= hs[i].Addr+hs[i].Size {
		t.Errorf("runtime.pclntab at %#x is not in .rdata", pcln.Addr)
	}
	md := objtest.CheckSymbolIn(t, obj, "runtime.firstmoduledata", object.SectionAlloc|object.SectionWrite)
	i := objtest.FindSection(hs, ".data")
	data, _ := obj.SectionData(i)
	off := md.Addr - hs[i].Addr
	ptr := uint64(binary.LittleEndian.Uint32(data[off:]))
	if is64 {
		ptr = binary.LittleEndian.Uint64(data[off:])
	}
	if ptr != pcln.Addr {
		t.Errorf("moduledata.pcHeader = %#x, want runtime.pclntab %#x", ptr, pcln.Addr)
	}
	objtest.CheckSymbolIn(t, obj, "main.work", object.SectionAlloc|object.SectionExec)
}

// wantSymbols returns from debug/pe the symbols defined in a section or
// absolute, in table order (see objtest.Backend.RunSymbols).
func wantSymbols(t *testing.T, pf *pe.File) []object.Symbol {
	var want []object.Symbol
	for _, s := range pf.Symbols {
		if s.StorageClass == 0x67 || s.Name == "" { // 0x67: IMAGE_SYM_CLASS_FILE
			continue
		}
		var addr uint64
		switch {
		case s.SectionNumber > 0:
			sect := pf.Sections[s.SectionNumber-1]
			addr = imageBase(pf) + uint64(sect.VirtualAddress) + uint64(s.Value)
		case s.SectionNumber == -1: // IMAGE_SYM_ABSOLUTE
			addr = uint64(s.Value)
		default:
			continue
		}
		want = append(want, object.Symbol{Name: s.Name, Addr: addr})
	}
	return want
}

func TestSymbols(t *testing.T) {
	backend.RunSymbols(t, objtest.PE, wantSymbols)
}

func TestCorrupt(t *testing.T) {
	orig := objtest.Binary(t, objtest.WindowsAMD64)
	le := binary.LittleEndian
	peOff := le.Uint32(orig[0x3c:])
	fh := peOff + 4
	patch := objtest.Patcher(orig)
	files := []objtest.Corrupt{
		{Name: "empty"},
		{Name: "MZ", Data: orig[:2]},
		{Name: "DOS header", Data: orig[:0x40]},
		{Name: "PE offset", Data: patch(func(b []byte) { le.PutUint32(b[0x3c:], 0xffffffff) })},
		{Name: "signature", Data: patch(func(b []byte) { b[peOff+1] = 'X' })},
		{Name: "file header", Data: orig[:fh+10]},
		{Name: "optional header size", Data: patch(func(b []byte) { le.PutUint16(b[fh+16:], 0xffff) })[:0x1000]},
		{Name: "optional header magic", Data: patch(func(b []byte) { le.PutUint16(b[fh+20:], 0x30b) })},
		{Name: "section count", Data: patch(func(b []byte) { le.PutUint16(b[fh+2:], 0xffff) })},
		{Name: "string table", Data: patch(func(b []byte) { le.PutUint32(b[fh+8:], 0xfffffff0) }), WantOpen: true},
		{Name: "symbol count", Data: patch(func(b []byte) { le.PutUint32(b[fh+12:], 0xffffffff) }), WantOpen: true},
		{Name: "headers only", Data: orig[:0x600], WantOpen: true},
	}
	objtest.RunCorrupt(t, files, NewBytes, func(t *testing.T, obj object.Object) {
		hs, _ := obj.Sections()
		if objtest.FindSection(hs, ".rdata") < 0 {
			t.Errorf("no .rdata in %+v", hs)
		}
	})
}

// TestUnterminatedNames checks that a COFF string table whose names all
// run to its end (round 3, r03) costs its size once, not once for each
// symbol, and that long names without a NUL are left out (short names,
// stored in the symbol, stay).
func TestUnterminatedNames(t *testing.T) {
	for _, tg := range objtest.PE {
		t.Run(tg.Name, func(t *testing.T) {
			data := objtest.Binary(t, tg)
			pf, err := pe.NewFile(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			// The string table follows the symbol table: a 4-byte
			// length, which counts itself, then the names.
			start := uint64(pf.PointerToSymbolTable) + uint64(pf.NumberOfSymbols)*pe.COFFSymbolSize
			size := uint64(binary.LittleEndian.Uint32(data[start:]))
			counts := objtest.CheckNamesBounded(t, data, start+4, size-4, NewBytes)
			if counts[0] < 100 || counts[1] >= counts[0]/2 {
				t.Errorf("Symbols yields %d symbols whose names run to the end, %d without a NUL; want 100 or more, far fewer", counts[0], counts[1])
			}
		})
	}
}
