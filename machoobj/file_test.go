package machoobj

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// wantSections computes from debug/macho what Sections must return for mf,
// which starts at offset base.
func wantSections(mf *macho.File, base uint64) []object.SectionHeader {
	var want []object.SectionHeader
	segs := map[string]*macho.Segment{}
	for _, l := range mf.Loads {
		if s, ok := l.(*macho.Segment); ok {
			segs[s.Name] = s
		}
	}
	for _, s := range mf.Sections {
		seg := segs[s.Seg]
		h := object.SectionHeader{Name: s.Name, Addr: s.Addr, Size: s.Size, Offset: base + uint64(s.Offset), FileSize: s.Size}
		if t := s.Flags & 0xff; t == 1 || t == 0xc || t == 0x12 {
			h.FileSize = 0
		}
		h.Flags = objtest.Flags(
			seg.Prot != 0 && s.Seg != "__DWARF",
			s.Seg == "__TEXT" && s.Flags&0x80000000 != 0, // S_ATTR_PURE_INSTRUCTIONS
			s.Seg == "__DATA")
		want = append(want, h)
	}
	return want
}

// wantData returns what SectionData(i) must return, read with debug/macho.
func wantData(mf *macho.File, want []object.SectionHeader) func(int) ([]byte, error) {
	return func(i int) ([]byte, error) {
		if want[i].FileSize == 0 {
			return []byte{}, nil
		}
		return mf.Sections[i].Data()
	}
}

// backend describes this package to the shared tests of objtest.
var backend = objtest.Backend[*macho.File]{Parse: macho.NewFile, NewBytes: NewBytes, New: New}

func TestTargets(t *testing.T) {
	backend.Run(t, objtest.MachO, func(t *testing.T, tg objtest.Target, o *objtest.Opened[*macho.File]) {
		want := wantSections(o.Std, 0)
		for _, obj := range o.Objects() {
			objtest.CheckSections(t, obj, want)
			objtest.CompareData(t, obj, wantData(o.Std, want))
			objtest.CheckTarget(t, obj, "macho", tg)
			checkAddresses(t, obj)
		}
		objtest.CheckBytes(t, o.Data, o.FromBytes)
		if _, err := NewFat(o.Data); err == nil {
			t.Error("NewFat of a thin file succeeded")
		}
	})
}

// checkAddresses checks the pclntab and moduledata against the symbols.
func checkAddresses(t *testing.T, obj object.Object) {
	t.Helper()
	hs, _ := obj.Sections()
	pcln := objtest.CheckSymbolIn(t, obj, "runtime.pclntab", object.SectionAlloc)
	objtest.PclntabAt(t, obj, pcln.Addr)
	i := objtest.FindSection(hs, "__gopclntab")
	if i < 0 || hs[i].Addr != pcln.Addr {
		t.Errorf("runtime.pclntab at %#x is not at the start of __gopclntab", pcln.Addr)
	}
	md := objtest.CheckSymbolIn(t, obj, "runtime.firstmoduledata", object.SectionAlloc|object.SectionWrite)
	if i := objtest.FindSection(hs, "__go_module"); i < 0 || hs[i].Addr != md.Addr {
		t.Errorf("runtime.firstmoduledata at %#x is not at the start of __go_module", md.Addr)
	}
	objtest.CheckSymbolIn(t, obj, "main.work", object.SectionAlloc|object.SectionExec)
}

// wantSymbols returns from debug/macho the defined symbols, in table order
// (see objtest.Backend.RunSymbols).
func wantSymbols(t *testing.T, mf *macho.File) []object.Symbol {
	var want []object.Symbol
	for _, s := range mf.Symtab.Syms {
		if s.Name != "" && s.Type&0xe0 == 0 && (s.Type&0x0e == 0x0e || s.Type&0x0e == 2) {
			want = append(want, object.Symbol{Name: s.Name, Addr: s.Value})
		}
	}
	return want
}

func TestSymbols(t *testing.T) {
	backend.RunSymbols(t, objtest.MachO, wantSymbols)
}

func TestFat(t *testing.T) {
	amd64 := objtest.Binary(t, objtest.DarwinAMD64)
	arm64 := objtest.Binary(t, objtest.DarwinARM64)
	fat := objtest.Fat(t, amd64, arm64)
	if _, err := NewBytes(fat); !errors.Is(err, ErrFat) {
		t.Errorf("NewBytes of a universal file: %v, want ErrFat", err)
	}
	ff, err := macho.NewFatFile(bytes.NewReader(fat))
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{fat, objtest.Fat64(t, amd64, arm64)} {
		files, err := NewFat(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2 || files[0].(object.Describer).Arch() != "amd64" || files[1].(object.Describer).Arch() != "arm64" {
			t.Fatalf("NewFat returned %d files", len(files))
		}
		for i, f := range files {
			arch := ff.Arches[i]
			want := wantSections(arch.File, uint64(arch.Offset))
			objtest.CheckSections(t, f, want)
			objtest.CompareData(t, f, wantData(arch.File, want))
			objtest.CheckBytes(t, data, f)
			checkAddresses(t, f)
			syms := objtest.FirstByName(wantSymbols(t, arch.File))
			if len(syms) < 100 {
				t.Fatalf("only %d symbols", len(syms))
			}
			objtest.CompareSymbols(t, syms, f)
		}
	}
}

// synth writes a minimal Mach-O file: one segment with a text section and
// a zero-fill section, and a symbol table with two symbols.
func synth(order binary.AppendByteOrder, is64 bool) []byte {
	var b []byte
	u32 := func(v uint32) { b = order.AppendUint32(b, v) }
	word := func(v uint64) {
		if is64 {
			b = order.AppendUint64(b, v)
		} else {
			u32(uint32(v))
		}
	}
	name := func(s string) {
		b = append(b, (s + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")[:16]...)
	}
	hdr, seg, sect, nl := 28, 56, 68, 12
	magic, cmdSeg := uint32(macho.Magic32), uint32(macho.LoadCmdSegment)
	if is64 {
		hdr, seg, sect, nl = 32, 72, 80, 16
		magic, cmdSeg = macho.Magic64, uint32(macho.LoadCmdSegment64)
	}
	cmds := seg + 2*sect + symtabSize
	dataOff := uint32(hdr + cmds)
	symOff := dataOff + 16
	strOff := symOff + uint32(2*nl)
	strtab := "\x00_start\x00main.x\x00"

	u32(magic)
	u32(uint32(macho.CpuPpc64))
	u32(0)
	u32(uint32(macho.TypeExec))
	u32(2) // ncmds
	u32(uint32(cmds))
	u32(0)
	if is64 {
		u32(0)
	}
	u32(cmdSeg)
	u32(uint32(seg + 2*sect))
	name("__TEXT")
	word(0x1000)       // vmaddr
	word(0x2000)       // vmsize
	word(0)            // fileoff
	word(0x1000)       // filesize
	u32(7)             // maxprot
	u32(7)             // initprot: rwx, as in an object file
	u32(2)             // nsects
	u32(0)             // flags
	for i := range 2 { // __text, then __bss
		sname, addr, off, flags := "__text", uint64(0x1000+dataOff), dataOff, uint32(0x80000400)
		if i == 1 {
			sname, addr, off, flags = "__bss", 0x1800, 0, 1
		}
		name(sname)
		name("__TEXT")
		word(addr)
		word(16) // size
		u32(off)
		u32(0) // align
		u32(0) // reloff
		u32(0) // nreloc
		u32(flags)
		u32(0)
		u32(0)
		if is64 {
			u32(0)
		}
	}
	u32(uint32(macho.LoadCmdSymtab))
	u32(symtabSize)
	u32(symOff)
	u32(2)
	u32(strOff)
	u32(uint32(len(strtab)))
	b = append(b, "0123456789abcdef"...)
	for i, strx := range []uint32{1, 8} {
		u32(strx)
		b = append(b, 0x0f, 1, 0, 0) // N_SECT|N_EXT, section 1
		word(0x1000 + uint64(dataOff) + uint64(i))
	}
	return append(b, strtab...)
}

// TestSynthetic checks both byte orders and both word sizes.
func TestSynthetic(t *testing.T) {
	for _, order := range []interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}{binary.BigEndian, binary.LittleEndian} {
		for _, is64 := range []bool{false, true} {
			data := synth(order, is64)
			o := backend.Open(t, data)
			want := wantSections(o.Std, 0)
			want[0].Flags = object.SectionAlloc | object.SectionExec | object.SectionWrite
			want[1].Flags = object.SectionAlloc | object.SectionWrite
			for _, obj := range o.Objects() {
				objtest.CheckSections(t, obj, want)
				objtest.CompareData(t, obj, wantData(o.Std, want))
				if obj.Endian() != order || obj.(object.Describer).Arch() != "ppc64" {
					t.Errorf("%v %v: Endian, Arch = %v, %q", order, is64, obj.Endian(), obj.(object.Describer).Arch())
				}
				for name, addr := range map[string]uint64{"_start": want[0].Addr, "main.x": want[0].Addr + 1} {
					s, err := obj.(object.SymbolLookup).LookupSymbol(name)
					if err != nil || s.Addr != addr {
						t.Errorf("%v %v: LookupSymbol(%q) = %+v, %v; want %#x", order, is64, name, s, err, addr)
					}
				}
			}
			objtest.CheckBytes(t, data, o.FromBytes)
		}
	}
}

func TestCorrupt(t *testing.T) {
	orig := objtest.Binary(t, objtest.DarwinARM64)
	le := binary.LittleEndian
	patch := objtest.Patcher(orig)
	fat := objtest.Fat(t, orig[:0x1000], orig)
	files := []objtest.Corrupt{
		{Name: "empty"},
		{Name: "magic", Data: orig[:4]},
		{Name: "header", Data: orig[:31]},
		{Name: "sizeofcmds", Data: patch(func(b []byte) { le.PutUint32(b[20:], 0xffffffff) })},
		{Name: "ncmds", Data: patch(func(b []byte) { le.PutUint32(b[16:], 0xffffffff) })},
		{Name: "cmdsize", Data: patch(func(b []byte) { le.PutUint32(b[36:], 4) })},
		{Name: "nsects", Data: patch(func(b []byte) { le.PutUint32(b[32+64:], 0xffffffff) })},
		{Name: "headers only", Data: orig[:0x1000], WantOpen: true},
		{Name: "symtab", Data: patch(func(b []byte) {
			// Point every LC_SYMTAB past the end.
			cmds := b[32 : 32+le.Uint32(b[20:])]
			for len(cmds) >= 8 {
				if le.Uint32(cmds) == uint32(macho.LoadCmdSymtab) {
					le.PutUint32(cmds[8:], 0xfffffff0)
				}
				cmds = cmds[le.Uint32(cmds[4:]):]
			}
		}), WantOpen: true},
		{Name: "fat truncated", Data: fat[:0x1000]},
		{Name: "fat no arches", Data: append([]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0}, make([]byte, 100)...)},
		{Name: "fat many arches", Data: append([]byte{0xca, 0xfe, 0xba, 0xbe, 0xff, 0xff, 0xff, 0xff}, make([]byte, 100)...)},
	}
	// A universal file opens as its first architecture.
	open := func(data []byte) (object.Object, error) {
		obj, err := NewBytes(data)
		if errors.Is(err, ErrFat) {
			var files []object.Object
			if files, err = NewFat(data); err == nil {
				obj = files[0]
			}
		}
		return obj, err
	}
	objtest.RunCorrupt(t, files, open, nil)
}

// symtabSize is the size of an LC_SYMTAB command.
const symtabSize = 24

// TestUnterminatedNames checks that a string table whose names all run to
// its end (round 3, r03) costs its size once, not once for each symbol,
// and that names without a NUL are left out.
func TestUnterminatedNames(t *testing.T) {
	for _, tg := range objtest.MachO {
		t.Run(tg.Name, func(t *testing.T) {
			data := objtest.Binary(t, tg)
			mf, err := macho.NewFile(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			st := mf.Symtab
			if st == nil {
				t.Fatal("no LC_SYMTAB")
			}
			// debug/macho leaves st.SymtabCmd zero: read the command.
			stroff, strsize := mf.ByteOrder.Uint32(st.LoadBytes[16:]), mf.ByteOrder.Uint32(st.LoadBytes[20:])
			counts := objtest.CheckNamesBounded(t, data, uint64(stroff), uint64(strsize), NewBytes)
			if counts[0] < 100 || counts[1] != 0 {
				t.Errorf("Symbols yields %d symbols whose names run to the end, %d without a NUL; want 100 or more, 0", counts[0], counts[1])
			}
		})
	}
}
