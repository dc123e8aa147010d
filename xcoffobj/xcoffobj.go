// Package xcoffobj presents XCOFF executables, the format of AIX, as
// objects that package gosym can read (see package
// github.com/gosym-dev/gosym/object).
//
// The Go linker writes 64-bit XCOFF for GOOS=aix GOARCH=ppc64 (Go 1.12
// and later); 32-bit XCOFF, which no Go target writes, is read too. The
// sections are those of the section table, in its order, with their
// names, virtual addresses and sizes: a Go executable has
//
//	.text    code, then read-only data: the Go symbol table is here,
//	         between the symbols runtime.pclntab and runtime.epclntab
//	         (alloc|exec)
//	.data    data, with what other formats keep read-only after
//	         relocation (the linker merges its relro segment into the
//	         data segment on AIX): runtime.firstmoduledata is here
//	         (alloc|write)
//	.bss     zero-filled data (alloc|write, no file bytes)
//	.dw...   DWARF sections, unless linked with -w (no flags)
//	.loader  the loader section (no flags)
//
// Section types other than text, data, bss and tbss occupy no memory at
// run time and get no flags. XCOFF is big-endian.
//
// NewBytes decodes the headers itself, without copying: SectionData
// returns subslices of the given bytes.
//
// # Symbols
//
// The File's LookupSymbol finds the external, static and weak symbols
// (storage classes C_EXT, C_HIDEXT and C_WEAKEXT) defined in a section;
// Addr is the symbol's value, a virtual address. Size is the function size
// of a function symbol's auxiliary entry, or the csect length of a section
// definition, else 0. Where several share a name, the first one wins. A
// file linked with -s has no table. The first few calls search the table
// where it is stored, allocating nothing; later ones read a map of its
// symbols, made once.
//
// Every Object this package returns is an *object.File, which also
// implements object.SymbolLookup and object.Describer (Format "xcoff").
package xcoffobj

import (
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/internal/xcofffile"
	"github.com/gosym-dev/gosym/object"
)

// NewBytes decodes the XCOFF file in data. SectionData returns subslices of
// data, which must not be modified while the Object is in use. Only the
// headers are read; symbols are read on the first call to LookupSymbol.
func NewBytes(data []byte) (object.Object, error) {
	f, err := xcofffile.NewBytes(data)
	if err != nil {
		return nil, err
	}
	return objfile.NewObject(f).(object.Object), nil
}
