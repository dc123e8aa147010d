// Package xcofffile decodes XCOFF files (AIX) for package object and
// package xcoffobj, which documents what it presents (see
// objfile.Decoder).
package xcofffile

import (
	"bytes"
	"encoding/binary"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Magic numbers: the first two bytes of the file header, big-endian.
const (
	Magic32 = 0x01df // U802TOCMAGIC, 32-bit XCOFF
	Magic64 = 0x01f7 // U64_TOCMAGIC, 64-bit XCOFF (what the Go linker writes)
)

// Sizes of the XCOFF structures this package decodes.
const (
	fileHeaderSize32    = 20
	fileHeaderSize64    = 24
	sectionHeaderSize32 = 40
	sectionHeaderSize64 = 72
	symbolSize          = 18 // every symbol table entry, auxiliary ones too
)

// Section types (the low 16 bits of s_flags).
const (
	stypText = 0x0020
	stypData = 0x0040
	stypBss  = 0x0080
	stypTbss = 0x0800
)

// File is an XCOFF file decoded for package object: an
// [objfile.Decoder]. A File is safe for concurrent use.
type File struct {
	data   []byte
	is64   bool
	secs   objfile.SectionTable
	symoff uint64 // f_symptr
	nsyms  uint64 // f_nsyms
	syms   objfile.SymbolMap
}

var be = binary.BigEndian

// formatError reports damage in the file; see objfile.FormatErrorf.
func formatError(format string, args ...any) error {
	return objfile.FormatErrorf("xcoff", -1, format, args...)
}

// sub returns the n bytes at off in data, or an error naming what if they
// are not all there.
func sub(data []byte, off, n uint64, what string) ([]byte, error) {
	if off > uint64(len(data)) || n > uint64(len(data))-off {
		return nil, formatError("%s at %#x size %#x extends beyond the file (%#x bytes)", what, off, n, len(data))
	}
	return data[off : off+n], nil
}

// NewBytes decodes the XCOFF file in data, 32- or 64-bit. The result's
// SectionData returns subslices of data, which must not be modified while
// the File is in use. Only the headers are read; symbols are read on the
// first call to LookupSymbol.
func NewBytes(data []byte) (*File, error) {
	if len(data) < 2 {
		return nil, formatError("not an XCOFF file")
	}
	f := &File{data: data, secs: objfile.SectionTable{Format: "xcoff", Data: data}}
	var nscns, opthdr, hdrSize, shSize uint64
	switch magic := be.Uint16(data); magic {
	case Magic32:
		h, err := sub(data, 0, fileHeaderSize32, "file header")
		if err != nil {
			return nil, err
		}
		nscns, f.symoff, f.nsyms = uint64(be.Uint16(h[2:])), uint64(be.Uint32(h[8:])), uint64(be.Uint32(h[12:]))
		opthdr, hdrSize, shSize = uint64(be.Uint16(h[16:])), fileHeaderSize32, sectionHeaderSize32
	case Magic64:
		f.is64 = true
		h, err := sub(data, 0, fileHeaderSize64, "file header")
		if err != nil {
			return nil, err
		}
		nscns, f.symoff, f.nsyms = uint64(be.Uint16(h[2:])), be.Uint64(h[8:]), uint64(be.Uint32(h[20:]))
		opthdr, hdrSize, shSize = uint64(be.Uint16(h[16:])), fileHeaderSize64, sectionHeaderSize64
	default:
		return nil, formatError("not an XCOFF file (magic %#04x)", magic)
	}
	tab, err := sub(data, hdrSize+opthdr, nscns*shSize, "section table")
	if err != nil {
		return nil, err
	}
	f.secs.Headers = make([]objfile.SectionHeader, nscns)
	for i := range f.secs.Headers {
		sh := tab[uint64(i)*shSize:]
		var addr, size, off uint64
		var flags uint32
		if f.is64 {
			addr, size, off, flags = be.Uint64(sh[16:]), be.Uint64(sh[24:]), be.Uint64(sh[32:]), be.Uint32(sh[64:])
		} else {
			addr, size, off, flags = uint64(be.Uint32(sh[12:])), uint64(be.Uint32(sh[16:])), uint64(be.Uint32(sh[20:])), be.Uint32(sh[36:])
		}
		f.secs.Headers[i] = sectionHeader(cstring(sh[:8]), addr, size, off, flags)
	}
	return f, nil
}

// sectionHeader converts an XCOFF section header: s_vaddr, s_size,
// s_scnptr and s_flags.
func sectionHeader(name string, addr, size, off uint64, flags uint32) objfile.SectionHeader {
	h := objfile.SectionHeader{Name: name, Addr: addr, Size: size, Offset: off, FileSize: size}
	typ := flags & 0xffff
	if off == 0 || typ == stypBss || typ == stypTbss {
		h.FileSize = 0 // zero-filled
	}
	switch typ {
	case stypText:
		h.Flags = objfile.SectionAlloc | objfile.SectionExec
	case stypData, stypBss, stypTbss:
		h.Flags = objfile.SectionAlloc | objfile.SectionWrite
	}
	return h
}

// Endian returns binary.BigEndian: AIX runs PowerPC big-endian only.
func (f *File) Endian() binary.ByteOrder { return binary.BigEndian }

// Sections returns the section headers in the order of the section table.
// The caller may modify the returned slice.
func (f *File) Sections() ([]objfile.SectionHeader, error) { return f.secs.Sections() }

// SectionData returns the FileSize bytes of section i, a subslice of the
// bytes given to NewBytes, which must not be modified.
func (f *File) SectionData(i int) ([]byte, error) { return f.secs.SectionData(i) }

// Format returns "xcoff".
func (f *File) Format() string { return "xcoff" }

// Arch returns "ppc64" for 64-bit XCOFF (the only XCOFF Go writes, for
// GOOS=aix GOARCH=ppc64) and "" for 32-bit XCOFF, which no Go target uses.
func (f *File) Arch() string {
	if f.is64 {
		return "ppc64"
	}
	return ""
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
