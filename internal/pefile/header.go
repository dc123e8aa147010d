package pefile

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"strconv"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Sizes of the PE structures this file decodes.
const (
	fileHeaderSize    = 20
	sectionHeaderSize = 40
	coffSymbolSize    = pe.COFFSymbolSize
)

// NewBytes decodes the PE image in data (it must start with the MS-DOS
// stub, "MZ"). The result is a *File whose SectionData returns subslices of
// data, which must not be modified while the File is in use. Only the
// headers are read; symbols are read on the first call to LookupSymbol.
func NewBytes(data []byte) (*File, error) {
	f, err := decode(data)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// formatError reports damage in the file; see objfile.FormatErrorf.
func formatError(format string, args ...any) error {
	return objfile.FormatErrorf("pe", -1, format, args...)
}

// sub returns the n bytes at off in data, or an error naming what if they
// are not all there.
func sub(data []byte, off, n uint64, what string) ([]byte, error) {
	if off > uint64(len(data)) || n > uint64(len(data))-off {
		return nil, formatError("%s at %#x size %#x extends beyond the file (%#x bytes)", what, off, n, len(data))
	}
	return data[off : off+n], nil
}

// decode parses the headers of the PE image in data.
func decode(data []byte) (*File, error) {
	le := binary.LittleEndian
	if len(data) < 0x40 || data[0] != 'M' || data[1] != 'Z' {
		return nil, formatError("not a PE file")
	}
	peOff := uint64(le.Uint32(data[0x3c:]))
	sig, err := sub(data, peOff, 4+fileHeaderSize, "PE header")
	if err != nil {
		return nil, err
	}
	if string(sig[:4]) != "PE\x00\x00" {
		return nil, formatError("invalid PE signature % x", sig[:4])
	}
	fh := sig[4:]
	f := &File{
		secs:    objfile.SectionTable{Format: "pe", Data: data},
		data:    data,
		machine: le.Uint16(fh[0:]),
		symoff:  uint64(le.Uint32(fh[8:])),
		nsyms:   uint64(le.Uint32(fh[12:])),
	}
	nsect := uint64(le.Uint16(fh[2:]))
	optSize := uint64(le.Uint16(fh[16:]))

	optOff := peOff + 4 + fileHeaderSize
	opt, err := sub(data, optOff, optSize, "optional header")
	if err != nil {
		return nil, err
	}
	if optSize > 0 {
		if optSize < 2 {
			return nil, formatError("optional header of %d bytes", optSize)
		}
		switch magic := le.Uint16(opt); magic {
		case 0x10b: // PE32
			if optSize < 32 {
				return nil, formatError("PE32 optional header of %d bytes", optSize)
			}
			f.imageBase = uint64(le.Uint32(opt[28:]))
		case 0x20b: // PE32+
			if optSize < 32 {
				return nil, formatError("PE32+ optional header of %d bytes", optSize)
			}
			f.imageBase = le.Uint64(opt[24:])
		default:
			return nil, formatError("unknown optional header magic %#x", magic)
		}
	}

	tab, err := sub(data, optOff+optSize, nsect*sectionHeaderSize, "section table")
	if err != nil {
		return nil, err
	}
	f.secs.Headers = make([]objfile.SectionHeader, nsect)
	for i := range f.secs.Headers {
		sh := tab[i*sectionHeaderSize:]
		f.secs.Headers[i] = sectionHeader(f.sectionName(sh[:8]), f.imageBase,
			le.Uint32(sh[8:]),  // VirtualSize
			le.Uint32(sh[12:]), // VirtualAddress
			le.Uint32(sh[16:]), // SizeOfRawData
			le.Uint32(sh[20:]), // PointerToRawData
			le.Uint32(sh[36:]), // Characteristics
		)
	}
	return f, nil
}

// sectionName decodes the 8-byte name field of a section header: a
// NUL-padded name, or "/" and the decimal offset of a longer name in the
// COFF string table. If the string table cannot be read (a truncated
// file), the name is left as it is, "/4" say, so that the sections with
// short names (.text, .rdata, .data) remain usable.
func (f *File) sectionName(b []byte) string {
	name := cstring(b)
	if len(name) < 2 || name[0] != '/' {
		return name
	}
	off, err := strconv.ParseUint(name[1:], 10, 32)
	if err != nil {
		return name
	}
	long, err := f.longName(off)
	if err != nil {
		return name
	}
	return long
}

// maxSectionName bounds the long name of a section: section names are
// short (".debug_info"), and the bound keeps a damaged string table from
// making every section copy it to its end.
const maxSectionName = 256

// longName returns the section name at offset off of the COFF string
// table.
func (f *File) longName(off uint64) (string, error) {
	tab, err := f.stringTable()
	if err != nil {
		return "", err
	}
	if off < 4 || off >= uint64(len(tab)) {
		return "", formatError("string table offset %d outside the table of %d bytes", off, len(tab))
	}
	b := tab[off:min(uint64(len(tab)), off+maxSectionName)]
	n := bytes.IndexByte(b, 0)
	if n < 0 {
		return "", formatError("string table offset %d: no name of at most %d bytes", off, maxSectionName)
	}
	return string(b[:n]), nil
}

// stringTable returns the COFF string table, which follows the symbol
// table: its 4-byte length, which counts itself, then the strings, which
// entries give by their offset in the table (at least 4).
func (f *File) stringTable() ([]byte, error) {
	if f.symoff == 0 {
		return nil, formatError("no symbol table, so no string table")
	}
	start := f.symoff + f.nsyms*coffSymbolSize
	lenField, err := sub(f.data, start, 4, "string table")
	if err != nil {
		return nil, err
	}
	return sub(f.data, start, uint64(binary.LittleEndian.Uint32(lenField)), "string table")
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
