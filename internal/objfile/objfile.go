// Package objfile defines the types shared by package object and the
// format backends (elfobj, machoobj, peobj, plan9obj). It exists only to
// break the import cycle between object, which detects formats, and the
// backends, which implement object.Object; users see these types through
// the aliases in package object.
package objfile

import (
	"encoding/binary"
	"errors"
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

// SectionHeader describes one section (or segment) of an Object.
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

const (
	// SectionAlloc marks a section that occupies memory at run time.
	SectionAlloc SectionFlags = 1 << iota
	// SectionExec marks a section that holds executable code.
	SectionExec
	// SectionWrite marks a section that is writable at run time.
	SectionWrite
)

// Symbol is an entry of an object's symbol table.
type Symbol struct {
	Name string
	Addr uint64 // virtual address at link time
	Size uint64 // 0 where the format records no size
}

// SymbolLookup is implemented by objects that can look up symbols by name.
// Objects without a symbol table (stripped binaries) either do not
// implement it or return ErrNoSymbol.
type SymbolLookup interface {
	LookupSymbol(name string) (Symbol, error)
}

// ErrNoSymbol is returned by LookupSymbol when the object has no symbol
// of that name, or no symbol table at all.
var ErrNoSymbol = errors.New("symbol not found")

// Describer is implemented by objects that can name their format and
// target architecture.
type Describer interface {
	// Format returns "elf", "macho", "pe" or "plan9".
	Format() string
	// Arch returns the GOARCH name of the target ("amd64", "arm64", ...),
	// or "" when the machine is unknown.
	Arch() string
}
