// Package peobj presents PE (Windows) executables as objects that package
// gosym can read (see package github.com/gosym-dev/gosym/object).
//
// Section addresses are absolute: the image base plus the section's
// relative virtual address. A section's Size is its VirtualSize, and its
// file bytes are the first min(VirtualSize, SizeOfRawData) bytes of its raw
// data: the rest of the raw data is alignment padding, and memory past the
// raw data is zero-filled. Names longer than 8 bytes (".debug_info",
// ".zdebug_line", ...) are resolved through the COFF string table.
// Discardable sections (debug information, .reloc, and the .symtab section
// the Go linker writes to hold the COFF symbol table) are not marked
// SectionAlloc, as their ELF equivalents are not.
//
// Go's PE files have no section of their own for the Go symbol table: it
// is inside .rdata (Go 1.11+; .text before), between the COFF symbols
// runtime.pclntab and runtime.epclntab when those are present.
//
// NewBytes decodes the headers itself, without copying, and reads the COFF
// symbol table only on the first LookupSymbol (debug/pe.NewFile reads all
// symbols and relocations up front). New adapts a file already opened with
// debug/pe.
//
// # Symbols
//
// The File's LookupSymbol looks in the COFF symbol table; where several
// share a name, the first one wins. A COFF symbol's value is relative to
// its section; the returned Addr is absolute (image base plus the
// section's relative address plus the value). Undefined, debug and file
// symbols are ignored, and sizes are not recorded, so Size is 0. A file
// linked with -s has no table. The first few calls search the table
// where it is stored, allocating nothing; later ones read a map of its
// symbols, made once.
//
// Every Object this package returns is an *object.File, which also
// implements object.SymbolLookup and object.Describer.
package peobj

import (
	"debug/pe"

	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/internal/pefile"
	"github.com/gosym-dev/gosym/object"
)

// New returns f as an Object. Its SectionData reads and copies the
// section's bytes.
func New(f *pe.File) object.Object { return wrap(pefile.New(f)) }

// NewBytes decodes the PE file in data. SectionData returns subslices of
// data, which must not be modified while the Object is in use. Only the
// headers are read; symbols are read on the first call to LookupSymbol.
func NewBytes(data []byte) (object.Object, error) {
	f, err := pefile.NewBytes(data)
	if err != nil {
		return nil, err
	}
	return wrap(f), nil
}

// wrap adapts d with package object's adapter.
func wrap(d objfile.Decoder) object.Object { return objfile.NewObject(d).(object.Object) }
