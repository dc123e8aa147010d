// Package elffile decodes ELF files for package object and package
// elfobj, which document what it presents (see objfile.Decoder).
package elffile

import (
	"debug/elf"
	"encoding/binary"
	"io"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// File is an ELF file decoded for package object: an [objfile.Decoder]. A File is safe for
// concurrent use.
type File struct {
	order   binary.ByteOrder
	class   elf.Class
	machine elf.Machine
	secs    objfile.SectionTable

	// A File made by NewBytes reads data; one made by New reads ef.
	data []byte
	ef   *elf.File

	// The first SHT_SYMTAB and SHT_DYNSYM sections (see table); typ is 0
	// where there is none.
	symtab, dynsym table
	syms           objfile.SymbolMap

	// copier, if not nil, reads bytes of data with pread: the ReaderAt
	// given to NewBytesAt, when it can (package object's mapped files).
	// Symbol lookups read the tables through it (see window).
	copier interface{ Copy(dst, src []byte) int }
}

// New returns f as an Object. The result is a *File. Its SectionData reads
// and copies the section's bytes; the raw bytes of a compressed section
// (SHF_COMPRESSED) cannot be read through debug/elf, so SectionData returns
// an error for it.
func New(f *elf.File) *File {
	ff := &File{
		order:   f.ByteOrder,
		class:   f.Class,
		machine: f.Machine,
		ef:      f,
		secs:    objfile.SectionTable{Format: "elf", Read: []io.ReaderAt{}, NoReader: "is compressed; debug/elf does not expose its raw bytes"},
	}
	if len(f.Sections) == 0 {
		for _, p := range f.Progs {
			if p.Type != elf.PT_LOAD {
				continue
			}
			ff.secs.Headers = append(ff.secs.Headers, segmentHeader(p.Flags, p.Vaddr, p.Memsz, p.Off, p.Filesz))
			ff.secs.Read = append(ff.secs.Read, p.ReaderAt)
		}
		return ff
	}
	for _, s := range f.Sections {
		if t := ff.slot(s.Type); t != nil && t.typ == 0 {
			t.typ, t.sec = s.Type, s
			if int(s.Link) < len(f.Sections) {
				t.strSec = f.Sections[s.Link]
			}
		}
		// s.FileSize is the raw sh_size; s.Size is the uncompressed size.
		ff.secs.Headers = append(ff.secs.Headers, sectionHeader(s.Name, s.Type, s.Flags, s.Addr, s.Offset, s.FileSize))
		var r io.ReaderAt
		if s.Flags&elf.SHF_COMPRESSED == 0 {
			r = s.ReaderAt
		}
		ff.secs.Read = append(ff.secs.Read, r)
	}
	return ff
}

// sectionHeader converts an ELF section header.
func sectionHeader(name string, typ elf.SectionType, flags elf.SectionFlag, addr, off, size uint64) objfile.SectionHeader {
	if typ == elf.SHT_NULL {
		// Section 0 is empty; with extended numbering, its size and link
		// hold the section count and the name table's index.
		return objfile.SectionHeader{Name: name}
	}
	h := objfile.SectionHeader{
		Name:     name,
		Addr:     addr,
		Size:     size,
		Offset:   off,
		FileSize: size,
	}
	if typ == elf.SHT_NOBITS {
		h.FileSize = 0
	}
	if flags&elf.SHF_ALLOC != 0 {
		h.Flags |= objfile.SectionAlloc
	}
	if flags&elf.SHF_EXECINSTR != 0 {
		h.Flags |= objfile.SectionExec
	}
	if flags&elf.SHF_WRITE != 0 {
		h.Flags |= objfile.SectionWrite
	}
	return h
}

// segmentHeader converts a PT_LOAD program header into a nameless section.
func segmentHeader(flags elf.ProgFlag, vaddr, memsz, off, filesz uint64) objfile.SectionHeader {
	h := objfile.SectionHeader{
		Addr:     vaddr,
		Size:     memsz,
		Offset:   off,
		FileSize: filesz,
		Flags:    objfile.SectionAlloc,
	}
	if flags&elf.PF_X != 0 {
		h.Flags |= objfile.SectionExec
	}
	if flags&elf.PF_W != 0 {
		h.Flags |= objfile.SectionWrite
	}
	return h
}

// Endian returns the byte order of the target.
func (f *File) Endian() binary.ByteOrder { return f.order }

// Sections returns the section headers, or the PT_LOAD segments of a file
// without section headers. The caller may modify the returned slice.
func (f *File) Sections() ([]objfile.SectionHeader, error) { return f.secs.Sections() }

// SectionData returns the FileSize bytes of section i as stored in the file
// (compressed sections are not decompressed). For a File made by NewBytes
// the result aliases the bytes given to NewBytes and must not be modified.
func (f *File) SectionData(i int) ([]byte, error) { return f.secs.SectionData(i) }

// Format returns "elf".
func (f *File) Format() string { return "elf" }

// Arch returns the GOARCH name of the file's machine, or "" if Go does not
// know it.
func (f *File) Arch() string { return goarch(f.machine, f.class, f.order) }

// goarch maps an ELF machine to a GOARCH name.
func goarch(m elf.Machine, c elf.Class, order binary.ByteOrder) string {
	is64 := c == elf.ELFCLASS64
	le := order == binary.LittleEndian
	pick := func(s32, s64 string) string {
		if is64 {
			return s64
		}
		return s32
	}
	switch m {
	case elf.EM_386:
		return "386"
	case elf.EM_X86_64:
		return pick("amd64p32", "amd64")
	case elf.EM_ARM:
		return "arm"
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_PPC:
		return "ppc"
	case elf.EM_PPC64:
		if le {
			return "ppc64le"
		}
		return "ppc64"
	case elf.EM_S390:
		return pick("s390", "s390x")
	case elf.EM_MIPS, elf.EM_MIPS_RS3_LE:
		if le {
			return pick("mipsle", "mips64le")
		}
		return pick("mips", "mips64")
	case elf.EM_RISCV:
		return pick("riscv", "riscv64")
	case elf.EM_LOONGARCH:
		return pick("", "loong64")
	case elf.EM_SPARC:
		return "sparc"
	case elf.EM_SPARCV9:
		return "sparc64"
	}
	return ""
}
