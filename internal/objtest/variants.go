package objtest

import (
	"encoding/binary"
	"testing"
)

// StripSectionHeaders returns a copy of the ELF file data with e_shoff,
// e_shnum and e_shstrndx zeroed, as strip --strip-section-headers leaves
// them: the section header table is still in the file, but nothing points
// to it.
func StripSectionHeaders(tb testing.TB, data []byte) []byte {
	tb.Helper()
	if len(data) < 64 || string(data[:4]) != "\x7fELF" {
		tb.Fatal("StripSectionHeaders: not an ELF file")
	}
	out := append([]byte(nil), data...)
	var order binary.ByteOrder = binary.LittleEndian
	if out[5] == 2 {
		order = binary.BigEndian
	}
	if out[4] == 2 { // ELFCLASS64
		order.PutUint64(out[40:], 0) // e_shoff
		order.PutUint16(out[60:], 0) // e_shnum
		order.PutUint16(out[62:], 0) // e_shstrndx
	} else {
		order.PutUint32(out[32:], 0)
		order.PutUint16(out[48:], 0)
		order.PutUint16(out[50:], 0)
	}
	return out
}

// Fat returns a Mach-O universal file holding the thin Mach-O files, each
// aligned to 4 KiB.
func Fat(tb testing.TB, thin ...[]byte) []byte {
	tb.Helper()
	return fat(tb, false, thin)
}

// Fat64 is like Fat but writes the 64-bit table (magic 0xcafebabf).
func Fat64(tb testing.TB, thin ...[]byte) []byte {
	tb.Helper()
	return fat(tb, true, thin)
}

func fat(tb testing.TB, wide bool, thin [][]byte) []byte {
	const align = 12
	magic, entsize := uint32(0xcafebabe), 20
	if wide {
		magic, entsize = 0xcafebabf, 32
	}
	hdr := 8 + entsize*len(thin)
	out := make([]byte, (hdr+1<<align-1)&^(1<<align-1))
	be := binary.BigEndian
	be.PutUint32(out[0:], magic)
	be.PutUint32(out[4:], uint32(len(thin)))
	for i, m := range thin {
		if len(m) < 12 {
			tb.Fatal("Fat: not a Mach-O file")
		}
		var order binary.ByteOrder = binary.LittleEndian
		if be.Uint32(m) == 0xfeedface || be.Uint32(m) == 0xfeedfacf {
			order = binary.BigEndian
		}
		e := out[8+entsize*i:]
		be.PutUint32(e[0:], order.Uint32(m[4:])) // cputype
		be.PutUint32(e[4:], order.Uint32(m[8:])) // cpusubtype
		if wide {
			be.PutUint64(e[8:], uint64(len(out)))
			be.PutUint64(e[16:], uint64(len(m)))
			be.PutUint32(e[24:], align)
		} else {
			be.PutUint32(e[8:], uint32(len(out)))
			be.PutUint32(e[12:], uint32(len(m)))
			be.PutUint32(e[16:], align)
		}
		out = append(out, m...)
		for len(out)%(1<<align) != 0 && i+1 < len(thin) {
			out = append(out, 0)
		}
	}
	return out
}
