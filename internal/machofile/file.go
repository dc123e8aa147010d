// Package machofile decodes Mach-O files for package object and package
// machoobj, which document what it presents (see objfile.Decoder).
package machofile

import (
	"debug/macho"
	"encoding/binary"
	"io"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// File is a thin Mach-O file, or one architecture of a universal file,
// decoded for package object: an [objfile.Decoder]. A File is safe for concurrent use.
type File struct {
	order binary.ByteOrder
	is64  bool
	cpu   macho.Cpu
	secs  objfile.SectionTable

	// A File made by NewBytes or NewFat reads data, the bytes of its
	// Mach-O file, which start at offset base of the file that was given
	// (non-zero for an architecture of a universal file). One made by New
	// reads mf.
	data   []byte
	base   uint64
	symtab *symtabCmd // LC_SYMTAB, if any (NewBytes)
	mf     *macho.File
	syms   objfile.SymbolMap
}

// Section types and attributes (the flags field of a section header).
const (
	sectionType           = 0x000000ff
	sZerofill             = 0x01
	sGBZerofill           = 0x0c
	sThreadLocalZerofill  = 0x12
	sAttrPureInstructions = 0x80000000
	sAttrSomeInstructions = 0x00000400
	sAttrDebug            = 0x02000000
	vmProtWrite           = 0x2
	sgReadOnly            = 0x10 // segment flag: read-only after fixups
)

// segment holds what a section's flags depend on in its segment.
type segment struct {
	initprot uint32
	flags    uint32
}

// sectionHeader converts a Mach-O section header. off is the offset of the
// section in the file given to NewBytes or NewFat.
func sectionHeader(name string, seg segment, addr, size, off uint64, flags uint32) objfile.SectionHeader {
	h := objfile.SectionHeader{
		Name:     name,
		Addr:     addr,
		Size:     size,
		Offset:   off,
		FileSize: size,
	}
	switch flags & sectionType {
	case sZerofill, sGBZerofill, sThreadLocalZerofill:
		h.FileSize = 0
	}
	if seg.initprot != 0 && flags&sAttrDebug == 0 {
		h.Flags |= objfile.SectionAlloc
	}
	if flags&(sAttrPureInstructions|sAttrSomeInstructions) != 0 {
		h.Flags |= objfile.SectionExec
	}
	if seg.initprot&vmProtWrite != 0 && seg.flags&sgReadOnly == 0 {
		h.Flags |= objfile.SectionWrite
	}
	return h
}

// New returns f as an Object. The result is a *File; its SectionData reads
// and copies the section's bytes, and section offsets are relative to the
// start of f (for an architecture of a universal file, to the start of
// that architecture's image).
func New(f *macho.File) *File {
	ff := &File{order: f.ByteOrder, cpu: f.Cpu, mf: f,
		secs: objfile.SectionTable{Format: "macho", Read: []io.ReaderAt{}}}
	// f.Sections lists the sections of each segment in load-command
	// order, Nsect at a time.
	next := 0
	for _, l := range f.Loads {
		s, ok := l.(*macho.Segment)
		if !ok {
			continue
		}
		seg := segment{initprot: s.Prot, flags: s.Flag}
		for range s.Nsect {
			if next >= len(f.Sections) {
				break
			}
			sect := f.Sections[next]
			next++
			ff.secs.Headers = append(ff.secs.Headers, sectionHeader(sect.Name, seg, sect.Addr, sect.Size, uint64(sect.Offset), sect.Flags))
			ff.secs.Read = append(ff.secs.Read, sect.ReaderAt)
		}
	}
	return ff
}

// Endian returns the byte order of the target.
func (f *File) Endian() binary.ByteOrder { return f.order }

// Sections returns the section headers in load-command order. The caller
// may modify the returned slice.
func (f *File) Sections() ([]objfile.SectionHeader, error) { return f.secs.Sections() }

// SectionData returns the FileSize bytes of section i. For a File made by
// NewBytes or NewFat the result aliases the bytes given to it and must not
// be modified.
func (f *File) SectionData(i int) ([]byte, error) { return f.secs.SectionData(i) }

// Format returns "macho".
func (f *File) Format() string { return "macho" }

// Arch returns the GOARCH name of the file's CPU type, or "" if Go does
// not know it.
func (f *File) Arch() string { return goarch(f.cpu) }

// goarch maps a Mach-O CPU type to a GOARCH name.
func goarch(cpu macho.Cpu) string {
	switch cpu {
	case macho.Cpu386:
		return "386"
	case macho.CpuAmd64:
		return "amd64"
	case macho.CpuArm:
		return "arm"
	case macho.CpuArm64:
		return "arm64"
	case macho.CpuPpc:
		return "ppc"
	case macho.CpuPpc64:
		return "ppc64"
	}
	return ""
}
