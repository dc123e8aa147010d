// Package elfobj presents ELF files as objects that package gosym can read
// (see package github.com/gosym-dev/gosym/object).
//
// NewBytes decodes the file headers itself, without copying: section data
// are subslices of the given bytes and the symbol table is read only on the
// first LookupSymbol. New adapts a file already opened with debug/elf.
//
// Section i of a file with section headers is ELF section i (index 0 is the
// null section). A file without section headers, such as a core dump or the
// output of strip --strip-section-headers, presents its PT_LOAD segments as
// sections with an empty Name, flagged from the segment permissions.
//
// Section sizes and data are as stored: a compressed section
// (SHF_COMPRESSED, as Go writes DWARF) is not decompressed, and a
// SHT_NOBITS section (.bss) has no file bytes.
//
// # Symbols
//
// The File's LookupSymbol looks in the static symbol table (.symtab) or,
// failing that, the dynamic one (.dynsym). Undefined symbols and section and
// file symbols are ignored; where several symbols share a name, the first
// one wins. The first few calls search the tables where they are
// stored, allocating nothing; later ones read a map of their symbols, made
// once. A stripped binary, or a
// file without section headers, has no symbol table: LookupSymbol returns
// object.ErrNoSymbol.
//
// Every Object this package returns is an *object.File, which also
// implements object.SymbolLookup and object.Describer.
package elfobj

import (
	"debug/elf"

	"github.com/gosym-dev/gosym/internal/elffile"
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/object"
)

// New returns f as an Object. Its SectionData reads and copies the
// section's bytes; the raw bytes of a compressed section (SHF_COMPRESSED)
// cannot be read through debug/elf, so SectionData returns an error for it.
func New(f *elf.File) object.Object { return wrap(elffile.New(f)) }

// NewBytes decodes the ELF file in data. SectionData returns subslices of
// data, which must not be modified while the Object is in use. Only the
// file and section headers are read (and the program headers if there are
// no sections); symbols are read on the first call to LookupSymbol.
func NewBytes(data []byte) (object.Object, error) {
	f, err := elffile.NewBytes(data)
	if err != nil {
		return nil, err
	}
	return wrap(f), nil
}

// wrap adapts d with package object's adapter.
func wrap(d objfile.Decoder) object.Object { return objfile.NewObject(d).(object.Object) }
