package elffile

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// maxSectionName is how many bytes of the section name table decode reads
// through a ReaderAt past the start of the last name, to find its end.
const maxSectionName = 256

// Sizes of the ELF structures this file decodes.
const (
	ehdr32Size = 52
	ehdr64Size = 64
	shdr32Size = 40
	shdr64Size = 64
	phdr32Size = 32
	phdr64Size = 56
)

// A table locates a symbol table (SHT_SYMTAB or SHT_DYNSYM) and its string
// table: in the file's bytes (NewBytes), or as debug/elf sections (New),
// whose contents are read once, on first use.
type table struct {
	typ            elf.SectionType
	off, size      uint64 // the symbols (NewBytes)
	stroff, strlen uint64 // the linked string table (NewBytes)

	// The GNU hash table (SHT_GNU_HASH) that indexes a .dynsym: the first
	// one linked to it (NewBytes); hashSize is 0 where there is none.
	hashOff, hashSize uint64

	sec, strSec *elf.Section // the same (New); strSec may be nil
	once        sync.Once
	syms, strs  []byte // the contents of sec and strSec
	err         error
}

// decoder reads the fields of one ELF class and byte order.
type decoder struct {
	order binary.ByteOrder
	is64  bool
}

// NewBytes decodes the ELF file in data. The result is a *File whose
// SectionData returns subslices of data, which must not be modified while
// the File is in use. Only the file and section headers are read (and the
// program headers if there are no sections); symbols are read on the first
// call to LookupSymbol.
func NewBytes(data []byte) (*File, error) {
	return NewBytesAt(data, nil)
}

// NewBytesAt is NewBytes, reading the file header, the section headers
// (or the program headers) and the section names through r, which must
// read the bytes of data at the same offsets, instead of from data. For a
// file mapped into data and read by r with pread(2), decoding then leaves
// the mapping untouched: the first read of a page of a fresh mapping costs
// a page fault, several times a pread (BENCHMARKS.md, "Big binaries").
// Tables of more than headerReadMax bytes, and anything r fails to read,
// are read from data. r is not used after NewBytesAt returns, unless it
// also has a method Copy(dst, src []byte) int that copies src, bytes of
// data, into dst as the built-in copy does (reading them with pread: an
// mmapfile.Data): symbol lookups then read the symbol tables, their
// names and hash tables through it, a chunk at a time, for as long as the
// File is used.
func NewBytesAt(data []byte, r io.ReaderAt) (*File, error) {
	f, err := decode(data, r)
	if err != nil {
		return nil, err
	}
	if c, ok := r.(interface{ Copy(dst, src []byte) int }); ok {
		f.copier = c
	}
	return f, nil
}

// headerReadMax bounds what decode reads through a ReaderAt in one table,
// so that what it allocates is not sized by an unchecked field.
const headerReadMax = 64 << 10

// readAt returns the n bytes of data at off, which lie within data: a copy
// read through r if r is not nil and n is at most headerReadMax, else a
// subslice of data.
func readAt(data []byte, r io.ReaderAt, off, n uint64) []byte {
	if r != nil && n <= headerReadMax {
		b := make([]byte, n)
		if m, _ := r.ReadAt(b, int64(off)); uint64(m) == n {
			return b
		}
	}
	return data[off : off+n]
}

// formatError reports damage in the file; see objfile.FormatErrorf.
func formatError(format string, args ...any) error {
	return objfile.FormatErrorf("elf", -1, format, args...)
}

// decode parses the headers of the ELF file in data, reading them through
// r if it is not nil (see NewBytesAt).
func decode(data []byte, r io.ReaderAt) (*File, error) {
	if len(data) < elf.EI_NIDENT {
		return nil, formatError("not an ELF file")
	}
	// The file header; data stands for the file's size below.
	hdr := readAt(data, r, 0, uint64(min(len(data), ehdr64Size)))
	if string(hdr[:4]) != elf.ELFMAG {
		return nil, formatError("not an ELF file")
	}
	f := &File{data: data, class: elf.Class(hdr[elf.EI_CLASS]), secs: objfile.SectionTable{Format: "elf", Data: data}}
	d := decoder{}
	switch f.class {
	case elf.ELFCLASS32:
	case elf.ELFCLASS64:
		d.is64 = true
	default:
		return nil, formatError("unknown ELF class %d", hdr[elf.EI_CLASS])
	}
	switch elf.Data(hdr[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		d.order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		d.order = binary.BigEndian
	default:
		return nil, formatError("unknown ELF data encoding %d", hdr[elf.EI_DATA])
	}
	f.order = d.order
	if v := elf.Version(hdr[elf.EI_VERSION]); v != elf.EV_CURRENT {
		return nil, formatError("unknown ELF version %d", v)
	}

	var phoff, shoff uint64
	var phentsize, phnum, shentsize, shnum, shstrndx uint64
	var wantShentsize, wantPhentsize uint64
	if d.is64 {
		if len(data) < ehdr64Size {
			return nil, formatError("file header truncated")
		}
		phoff = d.order.Uint64(hdr[32:])
		shoff = d.order.Uint64(hdr[40:])
		phentsize = uint64(d.order.Uint16(hdr[54:]))
		phnum = uint64(d.order.Uint16(hdr[56:]))
		shentsize = uint64(d.order.Uint16(hdr[58:]))
		shnum = uint64(d.order.Uint16(hdr[60:]))
		shstrndx = uint64(d.order.Uint16(hdr[62:]))
		wantShentsize, wantPhentsize = shdr64Size, phdr64Size
	} else {
		if len(data) < ehdr32Size {
			return nil, formatError("file header truncated")
		}
		phoff = uint64(d.order.Uint32(hdr[28:]))
		shoff = uint64(d.order.Uint32(hdr[32:]))
		phentsize = uint64(d.order.Uint16(hdr[42:]))
		phnum = uint64(d.order.Uint16(hdr[44:]))
		shentsize = uint64(d.order.Uint16(hdr[46:]))
		shnum = uint64(d.order.Uint16(hdr[48:]))
		shstrndx = uint64(d.order.Uint16(hdr[50:]))
		wantShentsize, wantPhentsize = shdr32Size, phdr32Size
	}
	f.machine = elf.Machine(d.order.Uint16(hdr[18:]))

	if shoff == 0 && shnum != 0 {
		return nil, formatError("%d section headers at offset 0", shnum)
	}
	if shoff != 0 && shentsize < wantShentsize {
		return nil, formatError("section header size %d, want at least %d", shentsize, wantShentsize)
	}
	// Extended numbering: with SHN_LORESERVE sections or more, e_shnum is
	// 0 and section 0 holds the count in sh_size (and, if e_shstrndx is
	// SHN_XINDEX, the string table index in sh_link).
	if shoff != 0 && shnum == 0 {
		sh, err := entries(data, r, shoff, 1, shentsize)
		if err != nil {
			return nil, formatError("section header 0: %w", err)
		}
		s := d.section(sh)
		if s.typ != elf.SHT_NULL {
			return nil, formatError("section 0 has type %v, want SHT_NULL", s.typ)
		}
		shnum = s.size
		if shstrndx == uint64(elf.SHN_XINDEX) {
			shstrndx = uint64(s.link)
		}
	}
	if shnum == 0 {
		if phnum != 0 && phentsize < wantPhentsize {
			return nil, formatError("program header size %d, want at least %d", phentsize, wantPhentsize)
		}
		return f, f.decodeSegments(d, r, phoff, phnum, phentsize)
	}
	if shstrndx >= shnum {
		return nil, formatError("section name table index %d out of range [0,%d)", shstrndx, shnum)
	}
	return f, f.decodeSections(d, r, shoff, shnum, shentsize, shstrndx)
}

// entries returns the bytes of a table of num entries of size entsize at off,
// checking that it lies within data, read through r if it is not nil (see
// readAt).
func entries(data []byte, r io.ReaderAt, off, num, entsize uint64) ([]byte, error) {
	if entsize != 0 && num > uint64(len(data))/entsize {
		return nil, fmt.Errorf("%d entries of %d bytes do not fit in the file", num, entsize)
	}
	n := num * entsize
	if off > uint64(len(data)) || n > uint64(len(data))-off {
		return nil, fmt.Errorf("table at %#x size %#x extends beyond the file (%#x bytes)", off, n, len(data))
	}
	return readAt(data, r, off, n), nil
}

// rawSection is a decoded section header.
type rawSection struct {
	name            uint32
	typ             elf.SectionType
	flags           elf.SectionFlag
	addr, off, size uint64
	link            uint32
	entsize         uint64
}

// section decodes the section header at the start of b.
func (d decoder) section(b []byte) rawSection {
	if d.is64 {
		return rawSection{
			name:    d.order.Uint32(b[0:]),
			typ:     elf.SectionType(d.order.Uint32(b[4:])),
			flags:   elf.SectionFlag(d.order.Uint64(b[8:])),
			addr:    d.order.Uint64(b[16:]),
			off:     d.order.Uint64(b[24:]),
			size:    d.order.Uint64(b[32:]),
			link:    d.order.Uint32(b[40:]),
			entsize: d.order.Uint64(b[56:]),
		}
	}
	return rawSection{
		name:    d.order.Uint32(b[0:]),
		typ:     elf.SectionType(d.order.Uint32(b[4:])),
		flags:   elf.SectionFlag(d.order.Uint32(b[8:])),
		addr:    uint64(d.order.Uint32(b[12:])),
		off:     uint64(d.order.Uint32(b[16:])),
		size:    uint64(d.order.Uint32(b[20:])),
		link:    d.order.Uint32(b[24:]),
		entsize: uint64(d.order.Uint32(b[36:])),
	}
}

// decodeSections decodes the section header table and the section names.
func (f *File) decodeSections(d decoder, r io.ReaderAt, shoff, shnum, shentsize, shstrndx uint64) error {
	tab, err := entries(f.data, r, shoff, shnum, shentsize)
	if err != nil {
		return formatError("section headers: %w", err)
	}
	raw := make([]rawSection, shnum)
	for i := range raw {
		raw[i] = d.section(tab[uint64(i)*shentsize:])
	}

	// Section names. Like debug/elf, a file whose e_shstrndx is SHN_UNDEF
	// has nameless sections.
	// The names are read from one copy of the table (see
	// objfile.StringTable), which ends with the last name, should the
	// table hold more than section names: every name starts at or before
	// the greatest offset, so it ends at or before the NUL that follows.
	last := uint32(0)
	for _, s := range raw {
		last = max(last, s.name)
	}
	var names []byte
	if shstrndx != 0 {
		s := raw[shstrndx]
		if s.typ != elf.SHT_STRTAB {
			return formatError("section name table %d has type %v, want SHT_STRTAB", shstrndx, s.typ)
		}
		if _, err = entries(f.data, nil, s.off, 1, s.size); err != nil {
			return formatError("section name table: %w", err)
		}
		// Through r, only up to a NUL after the last name, if there is
		// one near it.
		n := s.size
		if uint64(last)+maxSectionName < n {
			n = uint64(last) + maxSectionName
		}
		names = readAt(f.data, r, s.off, n)
		if n < s.size && bytes.IndexByte(names[last:], 0) < 0 {
			names = f.data[s.off : s.off+s.size]
		}
	}
	if uint64(last) < uint64(len(names)) {
		if n := bytes.IndexByte(names[last:], 0); n >= 0 {
			names = names[:int(last)+n+1]
		}
	}
	strtab := objfile.NewStringTable(names)
	f.secs.Headers = make([]objfile.SectionHeader, shnum)
	for i, s := range raw {
		var name string
		if names != nil {
			var ok bool
			if name, ok = strtab.Name(uint64(s.name)); !ok {
				return formatError("section %d: name offset %#x out of range", i, s.name)
			}
		}
		f.secs.Headers[i] = sectionHeader(name, s.typ, s.flags, s.addr, s.off, s.size)
	}

	// Remember where the symbol tables are; LookupSymbol reads them.
	dynsym := -1
	for i, s := range raw {
		t := f.slot(s.typ)
		if t == nil || t.typ != 0 {
			continue
		}
		t.typ, t.off, t.size = s.typ, s.off, s.size
		if uint64(s.link) < shnum {
			str := raw[s.link]
			t.stroff, t.strlen = str.off, str.size
		}
		if s.typ == elf.SHT_DYNSYM {
			dynsym = i
		}
	}
	// And where the hash table of .dynsym is: the dynamic linker's index
	// by name, which LookupSymbol reads too (see hashLookup).
	for _, s := range raw {
		if s.typ == elf.SHT_GNU_HASH && dynsym >= 0 && uint64(s.link) == uint64(dynsym) {
			f.dynsym.hashOff, f.dynsym.hashSize = s.off, s.size
			break
		}
	}
	return nil
}

// decodeSegments presents the PT_LOAD program headers as sections.
func (f *File) decodeSegments(d decoder, r io.ReaderAt, phoff, phnum, phentsize uint64) error {
	tab, err := entries(f.data, r, phoff, phnum, phentsize)
	if err != nil {
		return formatError("program headers: %w", err)
	}
	for i := range phnum {
		b := tab[i*phentsize:]
		if elf.ProgType(d.order.Uint32(b)) != elf.PT_LOAD {
			continue
		}
		var flags elf.ProgFlag
		var off, vaddr, filesz, memsz uint64
		if d.is64 {
			flags = elf.ProgFlag(d.order.Uint32(b[4:]))
			off = d.order.Uint64(b[8:])
			vaddr = d.order.Uint64(b[16:])
			filesz = d.order.Uint64(b[32:])
			memsz = d.order.Uint64(b[40:])
		} else {
			off = uint64(d.order.Uint32(b[4:]))
			vaddr = uint64(d.order.Uint32(b[8:]))
			filesz = uint64(d.order.Uint32(b[16:]))
			memsz = uint64(d.order.Uint32(b[20:]))
			flags = elf.ProgFlag(d.order.Uint32(b[24:]))
		}
		f.secs.Headers = append(f.secs.Headers, segmentHeader(flags, vaddr, memsz, off, filesz))
	}
	return nil
}
