// Package wasmobj presents WebAssembly modules written by the Go linker
// (GOOS=js since Go 1.11, GOOS=wasip1 since Go 1.21, GOARCH=wasm) as
// objects that package gosym can read (see package
// github.com/gosym-dev/gosym/object).
//
// The Go linker writes no DWARF for WebAssembly: the Go symbol table in
// the module's data is the only table that maps its code to functions,
// files and lines.
//
// # Sections
//
// The sections are the module's own, in file order, named after their
// id ("type", "import", "function", "table", "memory", "global", "export",
// "element", "code", "data", ...), custom sections by their own name
// ("name", "producers", "go:buildid"). Their Addr is 0, Offset and
// FileSize give the payload (after the id and size), and they have no
// flags, but for "code", which is marked executable (it is not mapped in
// the linear memory, so not alloc).
//
// After them comes one section that is not in the file: the linear
// memory that the data segments initialize, named "linear memory", with
// Addr the lowest address a segment initializes rounded down to a multiple
// of 16, and Size the span up to the highest, flags alloc|write. The Go symbol table, moduledata and all
// other data are there, at the addresses the Go runtime sees. The Go
// linker leaves runs of 8 zero bytes or more out of the data segments, so
// this section's SectionData is assembled from the segments, zeros
// between them, once, on first use: it is the one SectionData result that
// is not a subslice of the module's bytes. Its Offset is 0. The span must
// not exceed 64 times the file's size plus 1 MiB.
//
// # Addresses
//
// A WebAssembly function is not in the linear memory and has no address;
// the Go toolchain gives it one (cmd/link/internal/wasm): the i-th
// function the module defines (imports not counted) has PC_F = 0x1000 + i
// and entry PC PC_F<<16; from Go 1.28, PC_F = i and every PC has bit 63
// set: entry PC 1<<63 | i<<16 (the element section tells which: see
// Symbols). Inside a function, the low 16 bits, PC_B, number
// its resume points (the blocks of its body where execution can continue
// after a call returns or the goroutine is resumed): 0 at the entry, one
// more after each call. These PCs are what the pclntab, runtime.Callers,
// runtime.Frame.PC, panics' tracebacks and pprof profiles of Go wasm
// programs hold, so they are looked up as on any other architecture:
// runtime.Callers returns return addresses, PC_F<<16 | PC_B with PC_B the
// resume point after the call, and pc-1 is the call's own position, as
// the runtime's CallersFrames does; a runtime.Frame.PC is already pc-1.
// A PC of a function that a WebAssembly engine reports in its own stack
// traces (a function index, a byte offset in the code section) is not a
// Go PC: turn the function index into (0x1000 + index - imported
// functions)<<16, or 1<<63 | (index - imported functions)<<16 for Go
// 1.28; the resume point cannot be recovered from a byte offset, so only
// the function (the lookup of its entry PC) is known.
//
// # Symbols
//
// LookupSymbol finds the module's functions by the names of the "name"
// custom section, at their entry PCs as above, with Size 0. The rule is
// the one the element section tells: the Go linker's one segment maps
// table index PC_F to the function, so it starts at 0x1000 up to Go 1.27
// and at 0 from Go 1.28 (any other section: the older rule). These are the
// Go names with every character other than a letter, a digit, '_' or '.'
// replaced by '_' (cmd/link/internal/wasm, writeNameSec): main.main and
// runtime.main keep their names, internal/abi.Kind.String is
// internal_abi.Kind.String and go:buildid is go_buildid. The pclntab has
// the real names. The Go linker writes no data symbols: the pclntab and the
// moduledata are found by scanning the memory.
//
// Every Object this package returns is an *object.File, which also
// implements object.SymbolLookup and object.Describer (Format "wasm",
// Arch "wasm").
package wasmobj

import (
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/internal/wasmfile"
	"github.com/gosym-dev/gosym/object"
)

// NewBytes decodes the WebAssembly module in data. SectionData returns
// subslices of data, which must not be modified while the Object is in
// use, except for the memory section (see the package documentation).
func NewBytes(data []byte) (object.Object, error) {
	f, err := wasmfile.NewBytes(data)
	if err != nil {
		return nil, err
	}
	return objfile.NewObject(f).(object.Object), nil
}
