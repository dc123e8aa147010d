// Package sentinel makes the sentinel errors of the export formats'
// readers (lidia, gsym, symbfile): error values of their own that are also
// a more general one, such as gosym.ErrCorrupted or fs.ErrClosed, so that
// errors.Is finds either.
package sentinel

// New returns an error whose message is msg and which wraps base.
func New(msg string, base error) error { return &sentinel{msg, base} }

type sentinel struct {
	msg  string
	base error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.base }
