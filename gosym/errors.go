package gosym

import (
	"errors"
	"fmt"
	"io/fs"
)

var (
	// ErrPCNotFound reports a PC that is in no function, or not in the
	// function it was asked of.
	ErrPCNotFound = errors.New("gosym: pc not found")
	// ErrCorrupted reports a symbol table that is inconsistent. Errors
	// of lookups that wrap it are *FormatError values saying what was
	// wrong where; NewTable's for an object whose sections cannot be read,
	// and BuildInfo's for build information that cannot be parsed, wrap
	// the object's or the parser's error too.
	ErrCorrupted = errors.New("corrupt symbol table")
	// ErrPadding reports a PC in the alignment padding after a function's
	// code (inside [Entry, End), past the end of its tables), where no
	// instruction runs: Function.SPDelta has no value there. It is not
	// damage: every sound binary has such PCs.
	ErrPadding = errors.New("gosym: pc is in the padding after a function's code")
	// ErrNoFrameData reports a function without frame data (no pcsp
	// table), for which Function.SPDelta has no value: a linker marker
	// without code, such as go:textfipsstart, or an external function,
	// such as the race detector's C code, through which the runtime's
	// unwinder does not walk (Table.Unwind ends there). It is not damage.
	ErrNoFrameData = errors.New("gosym: function has no frame data")
	// ErrNoTable reports an object that holds no Go symbol table.
	ErrNoTable = errors.New("no Go symbol table")
	// ErrFunctionNotFound reports a name that no function has.
	ErrFunctionNotFound = errors.New("gosym: function not found")
	// ErrInlinedOnly reports a name that no physical function has but
	// whose code the compiler inlined into others: LookupFunction's error
	// matches it and ErrFunctionNotFound. Its calls are in the inline
	// trees of the functions it was inlined into (Function.InlinedCalls,
	// Table.Packages).
	ErrInlinedOnly = errors.New("gosym: function only inlined")
	// ErrFileNotFound reports a source file name (given to LinePCs) that
	// no function's code comes from.
	ErrFileNotFound = errors.New("gosym: file not found")
	// ErrClosed reports a lookup in a Table after Close. It matches
	// fs.ErrClosed too, as the errors of an os.File after Close do.
	ErrClosed error = closedError{}
)

// closedError is ErrClosed.
type closedError struct{}

func (closedError) Error() string { return "gosym: table is closed" }

// Is reports whether target is fs.ErrClosed.
func (closedError) Is(target error) bool { return target == fs.ErrClosed }

// A FormatError reports an inconsistency in a symbol table: what is wrong,
// and where. It wraps ErrCorrupted. Its message reads "corrupt symbol
// table: FUNCTION: WHAT (pclntab offset OFF)".
//
// Lookups that meet damaged data return one FormatError each, whose
// message is formatted only when Error is called, so that a pass of
// lookups over a damaged table costs no more memory than a pass over a
// sound one.
type FormatError struct {
	Func string // the function whose data is wrong; "" for the table itself
	// Off is the offset in the pclntab of the bytes found wrong (a
	// record, a table), or -1 when the error is not about one place.
	Off int64
	Msg string // what is wrong
}

func (e *FormatError) Error() string {
	s := ErrCorrupted.Error() + ": "
	if e.Func != "" {
		s += e.Func + ": "
	}
	s += e.Msg
	if e.Off >= 0 {
		s += fmt.Sprintf(" (pclntab offset %#x)", e.Off)
	}
	return s
}

// Unwrap returns ErrCorrupted.
func (e *FormatError) Unwrap() error { return ErrCorrupted }

// corrupt returns a FormatError about the table as a whole, its message
// formatted now (for errors of NewTable, made once).
func corrupt(format string, args ...any) error {
	return &FormatError{Off: -1, Msg: fmt.Sprintf(format, args...)}
}

// pcError reports a PC that no function (or not the function f) holds.
// It matches ErrPCNotFound.
type pcError struct {
	pc uint64
	f  string // the function asked of; "" for the whole table
}

func (e *pcError) Error() string {
	if e.f != "" {
		return fmt.Sprintf("gosym: pc %#x: not in %s", e.pc, e.f)
	}
	return fmt.Sprintf("gosym: pc %#x: not found", e.pc)
}

func (e *pcError) Is(target error) bool { return target == ErrPCNotFound }

// nameError reports a name that no function has. It matches
// ErrFunctionNotFound, and ErrInlinedOnly when into names a function
// the name's code was inlined into.
type nameError struct{ name, into string }

func (e *nameError) Error() string {
	if e.into != "" {
		return fmt.Sprintf("gosym: %s: no function of its own: only inlined (into %s, maybe others too)", e.name, e.into)
	}
	return fmt.Sprintf("gosym: %s: function not found", e.name)
}

func (e *nameError) Is(target error) bool {
	return target == ErrFunctionNotFound || target == ErrInlinedOnly && e.into != ""
}

// fileError reports a file name that no function's code comes from. It
// matches ErrFileNotFound.
type fileError struct{ file string }

func (e *fileError) Error() string { return fmt.Sprintf("gosym: %s: file not found", e.file) }

func (e *fileError) Is(target error) bool { return target == ErrFileNotFound }

// objectError returns the error of NewTable for an error of the object it
// reads: one that matches ErrCorrupted and wraps err, unless err reports a
// closed object (fs.ErrClosed), which is returned as it is.
func objectError(err error) error {
	if errors.Is(err, fs.ErrClosed) || errors.Is(err, ErrCorrupted) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCorrupted, err)
}
