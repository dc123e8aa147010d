package symbfile

// Option configures Write.
type Option func(*options)

type options struct {
	returnPads bool
}

func makeOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithReturnPads makes Write emit the file of return pads (ReturnPadV1
// records) instead of the file of ranges: one file per record kind, as the
// OpenTelemetry profiler writes them. Return pads are found by decoding the
// functions' machine code, for the architectures CallArchitectures lists.
func WithReturnPads(on bool) Option { return func(o *options) { o.returnPads = on } }
