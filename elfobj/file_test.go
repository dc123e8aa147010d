package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// wantSections computes from debug/elf what Sections must return.
func wantSections(ef *elf.File) []object.SectionHeader {
	var want []object.SectionHeader
	if len(ef.Sections) == 0 {
		for _, p := range ef.Progs {
			if p.Type != elf.PT_LOAD {
				continue
			}
			want = append(want, object.SectionHeader{
				Addr: p.Vaddr, Size: p.Memsz, Offset: p.Off, FileSize: p.Filesz,
				Flags: objtest.Flags(true, p.Flags&elf.PF_X != 0, p.Flags&elf.PF_W != 0),
			})
		}
		return want
	}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NULL {
			want = append(want, object.SectionHeader{Name: s.Name})
			continue
		}
		h := object.SectionHeader{Name: s.Name, Addr: s.Addr, Size: s.FileSize, Offset: s.Offset, FileSize: s.FileSize}
		if s.Type == elf.SHT_NOBITS {
			h.FileSize = 0
		}
		h.Flags = objtest.Flags(s.Flags&elf.SHF_ALLOC != 0, s.Flags&elf.SHF_EXECINSTR != 0, s.Flags&elf.SHF_WRITE != 0)
		want = append(want, h)
	}
	return want
}

// wantData returns what SectionData(i) must return, read with debug/elf.
func wantData(ef *elf.File, data []byte) func(int) ([]byte, error) {
	return func(i int) ([]byte, error) {
		if len(ef.Sections) == 0 {
			var loads []*elf.Prog
			for _, p := range ef.Progs {
				if p.Type == elf.PT_LOAD {
					loads = append(loads, p)
				}
			}
			return io.ReadAll(loads[i].Open())
		}
		s := ef.Sections[i]
		switch {
		case s.Type == elf.SHT_NOBITS:
			return []byte{}, nil
		case s.Flags&elf.SHF_COMPRESSED != 0:
			// debug/elf only decompresses; check the raw bytes.
			return data[s.Offset : s.Offset+s.FileSize], nil
		}
		return s.Data()
	}
}

// backend describes this package to the shared tests of objtest.
var backend = objtest.Backend[*elf.File]{Parse: elf.NewFile, NewBytes: NewBytes, New: New}

func TestTargets(t *testing.T) {
	backend.Run(t, objtest.ELF, func(t *testing.T, tg objtest.Target, o *objtest.Opened[*elf.File]) {
		ef, data := o.Std, o.Data
		want := wantSections(ef)
		for _, obj := range o.Objects() {
			objtest.CheckSections(t, obj, want)
			objtest.CheckTarget(t, obj, "elf", tg)
		}
		objtest.CompareData(t, o.FromBytes, wantData(ef, data))
		objtest.CheckBytes(t, data, o.FromBytes)

		// Through debug/elf, compressed sections cannot be read raw.
		hs, _ := o.FromFile.Sections()
		for i, s := range ef.Sections {
			got, err := o.FromFile.SectionData(i)
			if s.Flags&elf.SHF_COMPRESSED != 0 {
				if err == nil {
					t.Errorf("New: SectionData(%d) (%q) of a compressed section succeeded", i, s.Name)
				}
				continue
			}
			w, _ := wantData(ef, data)(i)
			if err != nil || !bytes.Equal(got, w) {
				t.Errorf("New: SectionData(%d) (%q) = %d bytes, %v; want %d bytes", i, hs[i].Name, len(got), err, len(w))
			}
		}

		i := objtest.FindSection(want, ".gopclntab")
		if i < 0 {
			t.Fatal("no .gopclntab")
		}
		objtest.PclntabAt(t, o.FromBytes, want[i].Addr)
	})
}

// wantSymbols returns from debug/elf the symbols LookupSymbol must find:
// the first defined symbol of each name, .symtab before .dynsym.
func wantSymbols(ef *elf.File) []object.Symbol {
	var want []object.Symbol
	for _, load := range []func() ([]elf.Symbol, error){ef.Symbols, ef.DynamicSymbols} {
		syms, _ := load()
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if s.Name == "" || s.Section == elf.SHN_UNDEF || typ == elf.STT_FILE || typ == elf.STT_SECTION {
				continue
			}
			want = append(want, object.Symbol{Name: s.Name, Addr: s.Value, Size: s.Size})
		}
	}
	return objtest.FirstByName(want)
}

func TestSymbols(t *testing.T) {
	backend.Run(t, objtest.ELF, func(t *testing.T, tg objtest.Target, o *objtest.Opened[*elf.File]) {
		want := wantSymbols(o.Std)
		stripped := tg.Name == objtest.LinuxStripped.Name
		if stripped != (len(want) == 0) {
			t.Fatalf("%d symbols in a binary built with %v", len(want), tg.Flags)
		}
		objtest.CompareSymbols(t, want, o.Objects()...)
		if !stripped {
			s := objtest.CheckSymbolIn(t, o.FromBytes, "runtime.pclntab", object.SectionAlloc)
			objtest.PclntabAt(t, o.FromBytes, s.Addr)
			objtest.CheckSymbolIn(t, o.FromBytes, "main.work", object.SectionAlloc|object.SectionExec)
			objtest.CheckSymbolIn(t, o.FromBytes, "main.counter", object.SectionAlloc|object.SectionWrite)
		}
	})
}

// TestNoSectionHeaders checks a file whose section headers are gone, as
// strip --strip-section-headers leaves it: its PT_LOAD segments are the
// sections, and the pclntab is still where the symbols said.
func TestNoSectionHeaders(t *testing.T) {
	targets := []objtest.Target{objtest.LinuxAMD64, objtest.Linux386, objtest.LinuxPPC64}
	objtest.Run(t, targets, func(t *testing.T, tg objtest.Target, orig []byte) {
		data := objtest.StripSectionHeaders(t, orig)
		o := backend.Open(t, data)
		ef := o.Std
		if len(ef.Sections) != 0 {
			t.Fatalf("debug/elf sees %d sections", len(ef.Sections))
		}
		want := wantSections(ef)
		if len(want) < 2 {
			t.Fatalf("only %d PT_LOAD segments", len(want))
		}
		for _, obj := range o.Objects() {
			objtest.CheckSections(t, obj, want)
			objtest.CompareData(t, obj, wantData(ef, data))
			if _, err := obj.(object.SymbolLookup).LookupSymbol("runtime.text"); !errors.Is(err, object.ErrNoSymbol) {
				t.Errorf("LookupSymbol without section headers: %v, want ErrNoSymbol", err)
			}
			objtest.CheckTarget(t, obj, "elf", tg)
		}
		objtest.CheckBytes(t, data, o.FromBytes)

		withSyms := backend.MustNewBytes(t, orig)
		s, err := withSyms.(object.SymbolLookup).LookupSymbol("runtime.pclntab")
		if err != nil {
			t.Fatal(err)
		}
		objtest.PclntabAt(t, o.FromBytes, s.Addr)
		objtest.CheckSymbolIn(t, withSyms, "main.work", object.SectionExec)
	})
}

// TestCorrupt checks that damaged headers give errors, not panics or huge
// allocations.
func TestCorrupt(t *testing.T) {
	orig := objtest.Binary(t, objtest.LinuxAMD64)
	le := binary.LittleEndian
	patch := objtest.Patcher(orig)
	shoff := le.Uint64(orig[40:])
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"magic only", orig[:4]},
		{"ident only", orig[:16]},
		{"header only", orig[:64]},
		{"no section headers", orig[:shoff]},
		{"class", patch(func(b []byte) { b[4] = 9 })},
		{"encoding", patch(func(b []byte) { b[5] = 9 })},
		{"version", patch(func(b []byte) { b[6] = 9 })},
		{"shoff past end", patch(func(b []byte) { le.PutUint64(b[40:], 1<<62) })},
		{"shoff wraps", patch(func(b []byte) { le.PutUint64(b[40:], ^uint64(0)-10) })},
		{"shentsize small", patch(func(b []byte) { le.PutUint16(b[58:], 8) })},
		{"shnum huge", patch(func(b []byte) { le.PutUint16(b[60:], 0xfeff) })},
		{"shstrndx", patch(func(b []byte) { le.PutUint16(b[62:], 0xfeff) })},
		{"shstrndx not strtab", patch(func(b []byte) { le.PutUint16(b[62:], 1) })},
		{"shoff zero", patch(func(b []byte) { le.PutUint64(b[40:], 0) })},
		{"extended shnum", patch(func(b []byte) { le.PutUint16(b[60:], 0) })},
		{"extended shnum huge", patch(func(b []byte) {
			le.PutUint16(b[60:], 0)
			le.PutUint64(b[shoff+32:], 1<<40) // section 0's sh_size
		})},
		{"phentsize", patch(func(b []byte) {
			copy(b[40:], make([]byte, 8))
			le.PutUint16(b[60:], 0)
			le.PutUint16(b[62:], 0)
			le.PutUint16(b[54:], 1)
		})},
		{"phnum huge", patch(func(b []byte) {
			copy(b[40:], make([]byte, 8))
			le.PutUint16(b[60:], 0)
			le.PutUint16(b[62:], 0)
			le.PutUint16(b[56:], 0xffff)
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj object.Object
			var err error
			if n := alloctest.Bytes(func() { obj, err = NewBytes(tt.data) }); n > objtest.OpenAllocLimit {
				t.Errorf("NewBytes allocated %d bytes", n)
			}
			if err != nil {
				t.Log(err)
				return
			}
			objtest.CheckBytes(t, tt.data, obj)
		})
	}

	// A section past the end of the file, and a symbol table that is not
	// there.
	hs, _ := backend.MustNewBytes(t, orig).Sections()
	symtab := objtest.FindSection(hs, ".symtab")
	data := patch(func(b []byte) {
		sh := b[shoff+uint64(symtab)*64:]          // 64: the size of an Elf64_Shdr
		le.PutUint64(sh[24:], uint64(len(orig))-8) // sh_offset
	})
	obj := backend.MustNewBytes(t, data)
	if _, err := obj.SectionData(symtab); err == nil {
		t.Error("SectionData of a section past the end succeeded")
	}
	_, err := obj.(object.SymbolLookup).LookupSymbol("runtime.text")
	if !errors.Is(err, object.ErrNoSymbol) {
		t.Errorf("LookupSymbol with a broken .symtab: %v, want ErrNoSymbol", err)
	}
	t.Log(err)
}

// TestExtendedNumbering checks the encoding for files with SHN_LORESERVE
// sections or more: e_shnum and e_shstrndx move into section 0.
func TestExtendedNumbering(t *testing.T) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.Linux386, objtest.LinuxS390X} {
		orig := objtest.Binary(t, tg)
		want, _ := backend.MustNewBytes(t, orig).Sections()
		ef, err := elf.NewFile(bytes.NewReader(orig))
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Clone(orig)
		o := ef.ByteOrder
		shoff, shnumAt, sizeAt, linkAt := uint64(o.Uint32(data[32:])), 48, 20, 24
		if ef.Class == elf.ELFCLASS64 {
			shoff, shnumAt, sizeAt, linkAt = o.Uint64(data[40:]), 60, 32, 40
		}
		shstrndx := o.Uint16(data[shnumAt+2:])
		o.PutUint16(data[shnumAt:], 0)
		o.PutUint16(data[shnumAt+2:], uint16(elf.SHN_XINDEX))
		if ef.Class == elf.ELFCLASS64 {
			o.PutUint64(data[shoff+uint64(sizeAt):], uint64(len(want)))
		} else {
			o.PutUint32(data[shoff+uint64(sizeAt):], uint32(len(want)))
		}
		o.PutUint32(data[shoff+uint64(linkAt):], uint32(shstrndx))
		got, _ := backend.MustNewBytes(t, data).Sections()
		objtest.CompareSections(t, got, want)
	}
}

// TestUnterminatedNames checks that a string table whose names all run to
// its end (round 3, r03) costs its size once, not once for each symbol,
// and that names without a NUL are left out, also for a file adapted from
// debug/elf (whose own Symbols copies every name to its end).
func TestUnterminatedNames(t *testing.T) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.Linux386} {
		t.Run(tg.Name, func(t *testing.T) {
			data := objtest.Binary(t, tg)
			hs, _ := backend.MustNewBytes(t, data).Sections()
			i := objtest.FindSection(hs, ".strtab")
			if i < 0 {
				t.Fatal("no .strtab")
			}
			// Read by NewBytes, and by New from debug/elf's File.
			viaStd := func(b []byte) (object.Object, error) {
				ef, err := elf.NewFile(bytes.NewReader(b))
				if err != nil {
					return nil, err
				}
				return New(ef), nil
			}
			for _, open := range []func([]byte) (object.Object, error){NewBytes, viaStd} {
				counts := objtest.CheckNamesBounded(t, data, hs[i].Offset, hs[i].FileSize, open)
				if counts[0] < 100 || counts[1] != 0 {
					t.Errorf("Symbols yields %d symbols whose names run to the end, %d without a NUL; want 100 or more, 0", counts[0], counts[1])
				}
			}
		})
	}
}

// TestManySymbolTables checks that, as in debug/elf, the first SHT_SYMTAB
// section is the symbol table: a damaged file whose every section claims
// to be a copy of it must not make each walk read them all.
func TestManySymbolTables(t *testing.T) {
	orig := objtest.Binary(t, objtest.LinuxAMD64)
	le := binary.LittleEndian
	hs, _ := backend.MustNewBytes(t, orig).Sections()
	symtab := objtest.FindSection(hs, ".symtab")
	shoff := le.Uint64(orig[40:])
	data := objtest.Patcher(orig)(func(b []byte) {
		src := b[shoff+uint64(symtab)*64:]
		for i := 1; i < symtab; i++ {
			sh := b[shoff+uint64(i)*64:]
			copy(sh[4:64], src[4:64]) // all but the name
		}
	})
	count := func(data []byte) int {
		n := 0
		for _, err := range backend.MustNewBytes(t, data).(object.SymbolIterator).Symbols() {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	if got, want := count(data), count(orig); got != want || symtab < 10 {
		t.Errorf("%d symbols from %d copies of .symtab, want %d", got, symtab, want)
	}
}
