package object

import (
	"fmt"

	"github.com/gosym-dev/gosym/internal/objfile"
)

func init() {
	objfile.NewFormatError = func(format string, off int64, what string) error {
		return &FormatError{Format: format, Offset: off, What: what}
	}
}

// A FormatError reports a damaged file: what is wrong, and where. Open,
// NewBytes and the backends' NewBytes return one for a file whose headers
// are inconsistent, and SectionData, LookupSymbol (wrapped with
// ErrNoSymbol) and Symbols for a section or symbol table that is; use
// errors.As to find it. Where a backend's New adapts a file of the
// standard library, the standard library's errors reading its symbol
// table become the What of a FormatError, and its errors reading a
// section are returned as it made them.
//
// Its message begins with the name of the format's backend package:
// "elfobj: section headers: table at 0x1000 size 0x40 extends beyond the
// file (0x800 bytes)".
type FormatError struct {
	Format string // "elf", "macho", "pe", "plan9", "xcoff" or "wasm"
	// Offset is the file offset of the structure found wrong, or -1 when
	// What says where or no one place is at fault.
	Offset int64
	What   string // what is wrong
}

func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%sobj: %s (file offset %#x)", e.Format, e.What, e.Offset)
	}
	return e.Format + "obj: " + e.What
}
