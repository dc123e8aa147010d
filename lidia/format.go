package lidia

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io/fs"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/sentinel"
)

// The byte layout (the package doc, "The byte layout"). Every integer is
// little-endian.
const (
	magic      = 0x6169642e // ".dia" read as a little-endian u32
	version    = 1
	headerSize = 0x80

	// Header offsets.
	hMagic       = 0x00
	hVersion     = 0x04
	hVAWidth     = 0x08
	hVACount     = 0x10
	hVAOffset    = 0x18
	hVACRC       = 0x20
	hRangeWidth  = 0x28
	hRangeCount  = 0x30
	hRangeOffset = 0x38
	hRangeCRC    = 0x40
	hStrSize     = 0x48
	hStrOffset   = 0x50
	hStrCRC      = 0x58
	hLineWidth   = 0x60
	hLineCount   = 0x68
	hLineOffset  = 0x70
	hLineCRC     = 0x78

	// Fields of a range entry, in order; each is the range table's
	// field width.
	fLength    = 0
	fDepth     = 1
	fFunc      = 2
	fFile      = 3
	fLineIdx   = 4
	fLineCount = 5
	fCallFile  = 6
	fCallLine  = 7
	numFields  = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

var (
	// ErrCorrupted reports a Lidia file that is malformed: a bad header,
	// a table outside the file, a checksum mismatch, or a reference out of
	// range met by Lookup. It is wrapped with a description, and it wraps
	// gosym.ErrCorrupted, so that one test finds damage in either.
	ErrCorrupted error = sentinel.New("lidia: corrupt file", gosym.ErrCorrupted)
	// ErrClosed reports a Lookup on a Reader after Close. It wraps
	// fs.ErrClosed, as the errors of a closed os.File do.
	ErrClosed error = sentinel.New("lidia: reader is closed", fs.ErrClosed)
)

// corrupt returns an error wrapping ErrCorrupted.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupted, fmt.Sprintf(format, args...))
}
