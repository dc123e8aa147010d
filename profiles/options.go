package profiles

import "github.com/gosym-dev/gosym/gosym"

// Option configures Symbolize.
type Option func(*options)

type options struct {
	returnAddresses bool
	wrappers        bool
	main            *gosym.Table
}

func makeOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithReturnAddresses says that the profile's addresses are raw return
// addresses (as a stack walker reads them from the stack), not the call
// instructions runtime/pprof records: every location that is a caller in
// some sample (not only the innermost location of its samples) is looked
// up at its address − 1, inside the call instruction. See the package
// documentation, "Addresses".
func WithReturnAddresses() Option { return func(o *options) { o.returnAddresses = true } }

// WithWrappers keeps compiler-generated wrapper frames, which Symbolize
// otherwise hides as runtime tracebacks do. See the package documentation,
// "Wrappers".
func WithWrappers() Option { return func(o *options) { o.wrappers = true } }

// WithMain names the binary of the profile's main mapping (the first) and
// of every other mapping of the same file, whatever their build IDs: for a
// profile recorded from a build whose build ID the binary at hand does not
// have, such as the unstripped build of a stripped binary, when the code
// is known to be the same. A profile without mappings is symbolized from
// it. main need not be among the tables given to Symbolize. See the
// package documentation, "Mappings".
func WithMain(main *gosym.Table) Option { return func(o *options) { o.main = main } }
