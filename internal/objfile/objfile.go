// Package objfile holds what the format decoders (internal/elffile,
// internal/machofile, internal/pefile, internal/plan9file,
// internal/xcofffile, internal/wasmfile) have in common:
// the Decoder interface they implement, their section and symbol types,
// and the helpers that read sections and symbol tables.
//
// Package object, which detects formats, imports the decoders and adapts a
// Decoder to its public types in one place (object.File); the public
// backend packages (elfobj, machoobj, peobj, plan9obj) import both object
// and their decoder and reach that adapter through NewObject. Nothing here
// appears in an exported signature.
package objfile

import (
	"encoding/binary"
	"iter"
)

// Decoder is one decoded file of some format.
type Decoder interface {
	// Endian returns the byte order of the target.
	Endian() binary.ByteOrder
	// Sections returns the section headers (a copy). Where the format's
	// section table is missing (an ELF file without section headers),
	// the loadable segments are returned instead, with an empty Name.
	Sections() ([]SectionHeader, error)
	// SectionData returns the FileSize bytes of section i, an index into
	// the slice returned by Sections. The slice may alias the file's
	// bytes and must not be modified.
	SectionData(i int) ([]byte, error)
	// LookupSymbol returns the symbol called name and true, or false if
	// there is none. Finding none, err is non-nil if the symbol table
	// could not be read (all or part of it); a symbol read before the
	// failure is still found, without an error.
	LookupSymbol(name string) (s Symbol, ok bool, err error)
	// Format returns "elf", "macho", "pe", "plan9", "xcoff" or "wasm".
	Format() string
	// Arch returns the GOARCH name of the target ("amd64", "arm64", ...),
	// or "" when the machine is unknown.
	Arch() string
}

// NewObject adapts d to package object's types: it returns a *object.File,
// as an object.Object. Package object sets it when it is initialized; the
// backend packages, which import object (so that it is always set when
// they run), call it to build the values their New and NewBytes return.
var NewObject func(d Decoder) any

// SectionHeader describes one section (or segment) of a Decoder; see
// object.SectionHeader.
type SectionHeader struct {
	Name     string
	Addr     uint64
	Size     uint64
	Offset   uint64
	FileSize uint64
	Flags    SectionFlags
}

// SectionFlags describe how a section is used at run time; see
// object.SectionFlags, whose values they share.
type SectionFlags uint32

// Section flags.
const (
	SectionAlloc SectionFlags = 1 << iota // occupies memory at run time
	SectionExec                           // holds executable code
	SectionWrite                          // writable at run time
)

// SymbolIterator is implemented by the Decoders that can list their
// symbol table; see object.SymbolIterator. Symbols yields each defined
// symbol once per entry (duplicate names included), in table order; on a
// damaged table it yields an error last. The number of symbols it yields
// is at most the file's size.
type SymbolIterator interface {
	Symbols() iter.Seq2[Symbol, error]
}

// Symbol is an entry of a symbol table; see object.Symbol.
type Symbol struct {
	Name string
	Addr uint64
	Size uint64
	Func bool
}
