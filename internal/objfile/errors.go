package objfile

import "fmt"

// NewFormatError makes the error a Decoder returns for a damaged file:
// an *object.FormatError. Package object sets it when it is initialized,
// as it sets NewObject; until then (in tests of the decoders alone) the
// error is a plain one with the same message.
var NewFormatError func(format string, off int64, what string) error

// FormatErrorf returns the error NewFormatError makes for damage in a
// file of the given format ("elf", "macho", "pe", "plan9", "xcoff" or
// "wasm") at file offset off, or -1 when the message says where or no
// one place is at fault; the message is formatted as by fmt.Errorf (%w
// is allowed, though what it wraps is kept only as text).
func FormatErrorf(format string, off int64, msg string, args ...any) error {
	what := fmt.Errorf(msg, args...).Error()
	if NewFormatError == nil {
		if off >= 0 {
			return fmt.Errorf("%sobj: %s (file offset %#x)", format, what, off)
		}
		return fmt.Errorf("%sobj: %s", format, what)
	}
	return NewFormatError(format, off, what)
}
