// Package plan9obj presents Plan 9 a.out executables as objects that
// package gosym can read (see package github.com/gosym-dev/gosym/object).
//
// A Plan 9 a.out file is a header followed by the text segment, the data
// segment, the symbol table and two unused tables. Its sections, in this
// order, are:
//
//	text  the text segment (code, then read-only data: the Go symbol
//	      table is here, between the symbols runtime.pclntab and
//	      runtime.epclntab); alloc|exec
//	data  the data segment (alloc|write)
//	bss   the zero-filled memory after data (alloc|write, no file bytes)
//	syms  the Plan 9 symbol table (no flags)
//	spsz  the sp/pc offset table (no flags; empty in Go binaries)
//	pcsz  the pc/line table (no flags; empty in Go binaries)
//
// The header records no addresses; they follow from the target's
// conventions, which the Go linker follows too: the file is mapped at the
// load address (0x200000 on amd64, 0x1000 on 386 and arm) so the text
// starts at load address + header size, and the data starts at the end of
// the text rounded up to a multiple of the load address.
//
// NewBytes decodes the header itself, without copying; New adapts a file
// already opened with debug/plan9obj.
//
// # Symbols
//
// The File's LookupSymbol finds the text, data and bss symbols (types T,
// t, L, l, D, d, B and b) of the Plan 9 symbol table; where several share a
// name, the first one wins. Sizes are not recorded, so Size is 0. A file
// linked with -s has no table. The first few calls search the table
// where it is stored, allocating nothing; later ones read a map of its
// symbols, made once.
//
// Every Object this package returns is an *object.File, which also
// implements object.SymbolLookup and object.Describer.
package plan9obj

import (
	p9 "debug/plan9obj"

	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/internal/plan9file"
	"github.com/gosym-dev/gosym/object"
)

// New returns f as an Object. Its SectionData reads and copies the
// section's bytes.
func New(f *p9.File) object.Object { return wrap(plan9file.New(f)) }

// NewBytes decodes the Plan 9 a.out file in data. SectionData returns
// subslices of data, which must not be modified while the Object is in
// use. Only the header is read; symbols are read on the first call to
// LookupSymbol.
func NewBytes(data []byte) (object.Object, error) {
	f, err := plan9file.NewBytes(data)
	if err != nil {
		return nil, err
	}
	return wrap(f), nil
}

// wrap adapts d with package object's adapter.
func wrap(d objfile.Decoder) object.Object { return objfile.NewObject(d).(object.Object) }
