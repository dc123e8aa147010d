package gosym

import (
	"errors"
	"fmt"
)

var (
	// ErrPCNotFound reports a PC that is in no function, or not in the
	// function it was asked of.
	ErrPCNotFound = errors.New("gosym: pc not found")
	// ErrCorrupted reports a symbol table that is inconsistent. It is
	// wrapped with a description of what was wrong.
	ErrCorrupted = errors.New("corrupt symbol table")
	// ErrNoTable reports an object that holds no Go symbol table.
	ErrNoTable = errors.New("no Go symbol table")
	// ErrFunctionNotFound reports a name that no function has.
	ErrFunctionNotFound = errors.New("gosym: function not found")
	// ErrClosed reports a use of a Table after Close.
	ErrClosed = errors.New("gosym: table is closed")
)

// corrupt returns an error wrapping ErrCorrupted.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupted, fmt.Sprintf(format, args...))
}
