// Package object presents executables of every format Go targets (ELF,
// Mach-O, PE and Plan 9) through one small interface, Object, which is all
// that package gosym needs to find and read Go symbol tables.
//
// Open maps a file and detects its format by magic; NewBytes does the same
// over bytes already in memory. Neither copies section data nor reads
// symbol tables up front: opening costs the same whatever the size of the
// binary. The backend packages elfobj, machoobj, peobj and plan9obj adapt
// one format each and can be used directly, also over files opened with
// debug/elf, debug/macho, debug/pe and debug/plan9obj.
//
// Sections are what the format calls sections, with the format's names
// (".gopclntab", "__gopclntab", ".rdata", "text"), link-time virtual
// addresses, and flags saying whether they occupy memory at run time and
// hold code or writable data. Where a format's section table is missing
// (an ELF file without section headers), its loadable segments stand in,
// with empty names. The backend packages document each format's details.
package object

import "github.com/gosym-dev/gosym/internal/objfile"

// Object is an executable or object file that may hold Go symbol tables.
//
//	Endian() binary.ByteOrder
//	Sections() ([]SectionHeader, error)
//	SectionData(i int) ([]byte, error) // i indexes the slice returned by Sections
type Object = objfile.Object

// SectionHeader describes one section, or one segment of a file whose
// section table is gone.
type SectionHeader = objfile.SectionHeader

// SectionFlags describe how a section is used at run time.
type SectionFlags = objfile.SectionFlags

// Section flags.
const (
	SectionAlloc = objfile.SectionAlloc // occupies memory at run time
	SectionExec  = objfile.SectionExec  // holds executable code
	SectionWrite = objfile.SectionWrite // writable at run time
)

// Symbol is an entry of an object's symbol table.
type Symbol = objfile.Symbol

// SymbolLookup is implemented by objects that can look up symbols by name.
type SymbolLookup = objfile.SymbolLookup

// Describer is implemented by objects that can name their format and
// target architecture.
type Describer = objfile.Describer

// ErrNoSymbol is returned, possibly wrapped with detail, by LookupSymbol
// when the symbol is absent, the object has no symbol table, or the table
// cannot be read.
var ErrNoSymbol = objfile.ErrNoSymbol
