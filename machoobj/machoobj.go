// Package machoobj presents Mach-O files as objects that package gosym can
// read (see package github.com/gosym-dev/gosym/object).
//
// Sections are named by their section name alone ("__gopclntab",
// "__go_module", "__noptrdata", ...), in load-command order; the segment
// decides the flags: SectionAlloc for a section of a mapped segment (not
// __DWARF, whose protections are empty, nor a debug section), SectionWrite
// for one of a writable segment that is not marked read-only after dyld's
// fixups (SG_READ_ONLY, as __DATA_CONST is), and SectionExec for a section
// holding instructions (S_ATTR_PURE_INSTRUCTIONS or S_ATTR_SOME_INSTRUCTIONS).
// Zero-fill sections (__bss, __noptrbss, ...) have no file bytes.
//
// NewBytes decodes a thin Mach-O file, both byte orders, 32 and 64 bits;
// NewFat decodes a universal ("fat") file into one Object per architecture.
// Both decode the headers themselves, without copying, and read the symbol
// table only on the first LookupSymbol (debug/macho.NewFile reads all
// symbols up front). New adapts a file already opened with debug/macho.
//
// # Symbols
//
// The File's LookupSymbol looks in the symbol table (LC_SYMTAB); where
// several share a name, the first one wins. The Go linker prefixes every
// symbol with "_", as C compilers do on Darwin; like debug/macho,
// LookupSymbol drops the prefix from names containing a dot, so Go symbols
// are found by their Go names ("runtime.pclntab") and C symbols by their
// stored names ("_main"). Debugging entries and undefined symbols are
// ignored, and sizes are not recorded, so Size is 0. The first few calls search the table
// where it is stored, allocating nothing; later ones read a map of its
// symbols, made once.
//
// Every Object this package returns is an *object.File, which also
// implements object.SymbolLookup and object.Describer.
package machoobj

import (
	"debug/macho"
	"errors"

	"github.com/gosym-dev/gosym/internal/machofile"
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/object"
)

// New returns f as an Object. Its SectionData reads and copies the
// section's bytes, and section offsets are relative to the start of f (for
// an architecture of a universal file, to the start of that
// architecture's image).
func New(f *macho.File) object.Object { return wrap(machofile.New(f)) }

// NewBytes decodes the thin Mach-O file in data. SectionData returns
// subslices of data, which must not be modified while the Object is in
// use. Only the header and load commands are read; symbols are read on the
// first call to LookupSymbol. For a universal file NewBytes returns
// ErrFat.
func NewBytes(data []byte) (object.Object, error) {
	f, err := machofile.NewBytes(data)
	if errors.Is(err, machofile.ErrFat) {
		return nil, ErrFat
	}
	if err != nil {
		return nil, err
	}
	return wrap(f), nil
}

// ErrFat is returned by NewBytes for a universal file, which NewFat decodes.
var ErrFat = errors.New("machoobj: universal (fat) file; use NewFat")

// NewFat decodes the universal ("fat") Mach-O file in data, returning one
// Object per architecture, in the order of the file's table. SectionData
// returns subslices of data, and section offsets are offsets in data (not
// in the architecture's image). Both the 32-bit (0xcafebabe) and 64-bit
// (0xcafebabf) tables are understood.
func NewFat(data []byte) ([]object.Object, error) {
	files, err := machofile.NewFat(data)
	if err != nil {
		return nil, err
	}
	objs := make([]object.Object, len(files))
	for i, f := range files {
		objs[i] = wrap(f)
	}
	return objs, nil
}

// wrap adapts d with package object's adapter.
func wrap(d objfile.Decoder) object.Object { return objfile.NewObject(d).(object.Object) }
