package gsym

import (
	"encoding/binary"
	"fmt"
	"io/fs"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/sentinel"
)

// The GSYM v1 layout, as LLVM's GsymReader reads it (see FORMAT.md).
const (
	magic   = 0x4753594d // "GSYM" read as a number in the file's byte order
	version = 1

	// The header: magic (4), version (2), address offset size (1), UUID
	// size (1), base address (8), number of addresses (4), string table
	// offset (4) and size (4), UUID (20).
	headerSize = 48
	hMagic     = 0
	hVersion   = 4
	hAddrSize  = 6
	hUUIDSize  = 7
	hBase      = 8
	hNumAddrs  = 16
	hStrOff    = 20
	hStrSize   = 24
	hUUID      = 28
	maxUUID    = 20

	// The kinds of data that follow a FunctionInfo's size and name.
	infoEnd    = 0 // end of the list
	infoLines  = 1 // a line table
	infoInline = 2 // an inline tree

	// The opcodes of a line table; the others are special opcodes.
	opEnd         = 0 // end of the table
	opSetFile     = 1 // ULEB file index; no row
	opAdvancePC   = 2 // ULEB address delta; pushes a row
	opAdvanceLine = 3 // SLEB line delta; no row
	opFirstSpec   = 4 // the first special opcode: line and address delta, pushes a row
)

var (
	// ErrCorrupted reports a GSYM file that is malformed: a bad header, a
	// table outside the file, or a reference or encoding out of range met
	// by Lookup. It is wrapped with a description, and it wraps
	// gosym.ErrCorrupted, so that one test finds damage in either.
	ErrCorrupted error = sentinel.New("gsym: corrupt file", gosym.ErrCorrupted)
	// ErrClosed reports a Lookup on a Reader after Close. It wraps
	// fs.ErrClosed, as the errors of a closed os.File do.
	ErrClosed error = sentinel.New("gsym: reader is closed", fs.ErrClosed)
)

// corrupt returns an error wrapping ErrCorrupted.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupted, fmt.Sprintf(format, args...))
}

// errNotFound is Lookup's error at an address no function covers.
var errNotFound = fmt.Errorf("gsym: %w", gosym.ErrPCNotFound)

// order returns the byte order of a file whose header starts with h, or
// nil if h does not start with the magic in either order.
func order(h []byte) binary.ByteOrder {
	switch {
	case binary.LittleEndian.Uint32(h) == magic:
		return binary.LittleEndian
	case binary.BigEndian.Uint32(h) == magic:
		return binary.BigEndian
	}
	return nil
}
