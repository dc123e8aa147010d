package xcoffobj

import (
	"encoding/binary"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// xcoff32 builds a small 32-bit XCOFF file, laid out as AIX's filehdr.h,
// scnhdr.h and syms.h define it: a .text section of 16 bytes and a .bss
// of 32, a function symbol with a short name (in the entry) and function
// and csect auxiliary entries, and a common symbol whose name is in the
// string table. No Go target writes 32-bit XCOFF.
func xcoff32() []byte {
	be := binary.BigEndian
	const fhdr, shdr, sym = 20, 40, 18
	textOff := fhdr + 2*shdr
	symOff := textOff + 16
	b := make([]byte, symOff+5*sym)
	be.PutUint16(b[0:], 0x01df)
	be.PutUint16(b[2:], 2) // sections
	be.PutUint32(b[8:], uint32(symOff))
	be.PutUint32(b[12:], 5) // entries, auxiliary ones included
	// .text
	s := b[fhdr:]
	copy(s, ".text")
	be.PutUint32(s[8:], 0x10000100)  // s_paddr
	be.PutUint32(s[12:], 0x10000100) // s_vaddr
	be.PutUint32(s[16:], 16)         // s_size
	be.PutUint32(s[20:], uint32(textOff))
	be.PutUint32(s[36:], 0x20) // STYP_TEXT
	// .bss
	s = b[fhdr+shdr:]
	copy(s, ".bss")
	be.PutUint32(s[12:], 0x20000000)
	be.PutUint32(s[16:], 32)
	be.PutUint32(s[36:], 0x80) // STYP_BSS
	for i := range 16 {
		b[textOff+i] = byte(i + 1)
	}
	// main.f: C_EXT function in section 1, two auxiliary entries.
	e := b[symOff:]
	copy(e, "main.f")
	be.PutUint32(e[8:], 0x10000104)
	be.PutUint16(e[12:], 1)
	be.PutUint16(e[14:], 0x20) // function
	e[16], e[17] = 2, 2        // C_EXT, 2 aux
	be.PutUint32(e[sym+4:], 8) // AUX_FCN x_fsize
	e[2*sym+10] = 2            // csect: XTY_LD
	// runtime.longname: C_HIDEXT common symbol in section 2.
	e = b[symOff+3*sym:]
	be.PutUint32(e[4:], 4) // string table offset
	be.PutUint32(e[8:], 0x20000000)
	be.PutUint16(e[12:], 2)
	e[16], e[17] = 107, 1
	be.PutUint32(e[sym:], 32) // csect x_scnlen
	e[sym+10] = 3             // XTY_CM
	str := "runtime.longname\x00"
	b = be.AppendUint32(b, uint32(4+len(str)))
	return append(b, str...)
}

func TestXCOFF32(t *testing.T) {
	data := xcoff32()
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	if obj.Endian() != binary.BigEndian {
		t.Errorf("Endian() = %v", obj.Endian())
	}
	if d := obj.(object.Describer); d.Format() != "xcoff" || d.Arch() != "" {
		t.Errorf("Format, Arch = %q, %q; want xcoff and none", d.Format(), d.Arch())
	}
	objtest.CheckSections(t, obj, []object.SectionHeader{
		{Name: ".text", Addr: 0x10000100, Size: 16, Offset: 100, FileSize: 16, Flags: object.SectionAlloc | object.SectionExec},
		{Name: ".bss", Addr: 0x20000000, Size: 32, Flags: object.SectionAlloc | object.SectionWrite},
	})
	if b, _ := obj.SectionData(0); len(b) != 16 || b[0] != 1 || b[15] != 16 {
		t.Errorf(".text data % x", b)
	}
	objtest.CompareSymbols(t, []object.Symbol{
		{Name: "main.f", Addr: 0x10000104, Size: 8},
		{Name: "runtime.longname", Addr: 0x20000000, Size: 32},
	}, obj)
	// The same file in the object package's detection.
	if o, err := object.NewBytes(data); err != nil || o.(object.Describer).Format() != "xcoff" {
		t.Errorf("object.NewBytes: %v", err)
	}
}
