// Package object presents executables of every format Go writes (ELF,
// Mach-O, PE, Plan 9, XCOFF and WebAssembly) through one small interface,
// Object, which is all that package gosym needs to find and read Go symbol
// tables.
//
// Open maps a file and detects its format by magic; NewBytes does the same
// over bytes already in memory. Neither copies section data nor reads
// symbol tables up front: opening costs the same whatever the size of the
// binary. (The one exception is a WebAssembly module's linear memory,
// assembled from its data segments on first use: see package wasmobj.)
// The backend packages elfobj, machoobj, peobj, plan9obj, xcoffobj and
// wasmobj adapt one format each and can be used directly, the first four
// also over files opened with debug/elf, debug/macho, debug/pe and
// debug/plan9obj.
//
// Sections are what the format calls sections, with the format's names
// (".gopclntab", "__gopclntab", ".rdata", "text"), link-time virtual
// addresses, and flags saying whether they occupy memory at run time and
// hold code or writable data. Where a format's section table is missing
// (an ELF file without section headers), its loadable segments stand in,
// with empty names. The backend packages document each format's details.
//
// # Layout
//
// Whatever made it (Open, NewBytes, or a backend's New or NewBytes), an
// Object of this module is a *File. The formats are decoded by internal
// packages, one per format, which package object imports to detect them;
// File adapts such a decoder to this package's types, converting its
// section headers once. The backend packages import package object and
// their format's decoder, and return the decoder wrapped in a File. So a
// program that imports only package object reads every format, and no
// exported name of the module mentions an internal package.
//
// # Lifetime
//
// The memory of a File made by Open is released when the File becomes
// unreachable, not by Close: Close only marks the File closed, so that its
// methods report [fs.ErrClosed]. Slices that SectionData returned stay
// readable as long as the File is reachable (package gosym's Table keeps
// its Object, so the Functions of a Table keep the mapping too).
package object

import (
	"encoding/binary"
	"errors"
	"iter"
)

// Object is an executable or object file that may hold Go symbol tables.
type Object interface {
	// Endian returns the byte order of the target.
	Endian() binary.ByteOrder
	// Sections returns the section headers. Where the format's section
	// table is missing (an ELF file without section headers), the loadable
	// segments are returned instead, with an empty Name.
	Sections() ([]SectionHeader, error)
	// SectionData returns the file contents of section i, an index into
	// the slice returned by Sections. It holds FileSize bytes, which may be
	// fewer than Size (none at all for bss-like sections). The slice may
	// alias the underlying file data and must not be modified.
	SectionData(i int) ([]byte, error)
}

// SectionHeader describes one section, or one segment of a file whose
// section table is gone.
type SectionHeader struct {
	Name     string       // the format's own name: ".gopclntab", "__gopclntab", ".rdata", ...
	Addr     uint64       // virtual address at link time
	Size     uint64       // size in memory
	Offset   uint64       // offset of the section's bytes in the file
	FileSize uint64       // bytes present in the file; 0 for bss and zero-fill sections
	Flags    SectionFlags // what the section holds at run time
}

// SectionFlags describe how a section is used at run time.
type SectionFlags uint32

// Section flags.
const (
	SectionAlloc SectionFlags = 1 << iota // occupies memory at run time
	SectionExec                           // holds executable code
	SectionWrite                          // writable at run time
)

// Symbol is an entry of an object's symbol table.
type Symbol struct {
	Name string
	Addr uint64 // virtual address at link time
	Size uint64 // 0 where the format records no size
	Func bool   // a function (code) symbol, where the format says so
}

// SymbolLookup is implemented by objects that can look up symbols by name.
// Objects without a symbol table (stripped binaries) either do not
// implement it or return ErrNoSymbol.
type SymbolLookup interface {
	LookupSymbol(name string) (Symbol, error)
}

// SymbolIterator is implemented by objects that can list their symbol
// table. Symbols yields every symbol of the object's symbol table, one per
// entry and in table order, with the filter LookupSymbol applies (defined
// symbols with a name; no section, file or debugging entries); names may
// repeat. The table is ELF's .symtab, or .dynsym when there is no .symtab;
// Mach-O's LC_SYMTAB (Go names without the leading underscore, as
// LookupSymbol); PE's COFF symbol table; Plan 9's text, data and bss
// symbols. Func is set from ELF's STT_FUNC, Mach-O sections that hold
// instructions, COFF's function type, and Plan 9's text types. A table that
// cannot be read, in part or whole, yields the symbols read before the
// damage and then one error, which ends the sequence. An object without a
// symbol table yields nothing.
type SymbolIterator interface {
	Symbols() iter.Seq2[Symbol, error]
}

// Describer is implemented by objects that can name their format and
// target architecture.
type Describer interface {
	// Format returns "elf", "macho", "pe", "plan9", "xcoff" or "wasm".
	Format() string
	// Arch returns the GOARCH name of the target ("amd64", "arm64", ...),
	// or "" when the machine is unknown.
	Arch() string
}

// ErrNoSymbol is returned, possibly wrapped with detail, by LookupSymbol
// when the symbol is absent, the object has no symbol table, or the table
// cannot be read.
var ErrNoSymbol = errors.New("symbol not found")
