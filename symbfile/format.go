package symbfile

import (
	"fmt"
	"io/fs"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/sentinel"
)

// magic starts every symbfile.
const magic = "symbfile"

// Message types: the prefix of every message after its length.
const (
	mtHeader      = 1
	mtRangeV1     = 2
	mtReturnPadV1 = 3
	mtStringTable = 4
)

// Field numbers.
const (
	// RangeV1.
	rDeltaVA     = 1
	rLength      = 2
	rFuncStr     = 3
	rFileStr     = 4
	rCallLine    = 5
	rCallFileStr = 6
	rDepth       = 7
	rLineTable   = 8
	rFuncRef     = 9
	rFileRef     = 10
	rCallFileRef = 11
	rSetVA       = 12

	// LineTable.
	ltOffset = 1
	ltLine   = 2

	// ReturnPadV1.
	pDeltaVA = 1
	pFunc    = 2
	pFile    = 3
	pLine    = 4
	pSetVA   = 5

	// StringTableV1.
	stStrings = 1
)

// maxMessage is the largest message (without its prefix) the
// OpenTelemetry reader accepts, 16 MiB: Write never writes a larger one,
// and NewReader rejects one.
const maxMessage = 16 << 20

// maxTable is the size at which Write closes a string table and starts
// another, well below maxMessage.
const maxTable = 4 << 20

var (
	// ErrCorrupted reports a symbfile that is malformed: a bad magic, a
	// message that runs past the end of the file or is no valid protobuf,
	// a reference to a string the table does not have, columns of
	// different lengths. It is wrapped with a description that says
	// where, and it wraps gosym.ErrCorrupted, so that one test finds
	// damage in a binary or in a symbol file.
	ErrCorrupted error = sentinel.New("symbfile: corrupt file", gosym.ErrCorrupted)
	// ErrClosed reports a Lookup on a Reader after Close. It wraps
	// fs.ErrClosed, as the errors of a closed os.File do.
	ErrClosed error = sentinel.New("symbfile: reader is closed", fs.ErrClosed)
	// errNotFound is Lookup's error at an address nothing covers: made
	// once, as Lookup allocates nothing.
	errNotFound error = sentinel.New("symbfile: no range or return pad covers the address", gosym.ErrPCNotFound)
)

// corrupt returns an error wrapping ErrCorrupted.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupted, fmt.Sprintf(format, args...))
}
