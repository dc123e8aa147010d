package lidia

// Option configures Write, Open and NewReader. The same options serve
// both sides; each says what it does for which.
type Option func(*options)

type options struct {
	crc     bool
	lines   bool
	files   bool
	inlines bool
}

func makeOptions(opts []Option) options {
	o := options{lines: true, files: true, inlines: true}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithCRC makes Open and NewReader verify the CRC32C of every table. Write
// always stores the checksums, so for it this option changes nothing.
func WithCRC() Option { return func(o *options) { o.crc = true } }

// WithLines says whether Write emits line tables and call lines (on by
// default); without them every range gets an empty line table and call line
// 0, and Lookup reports line 0 for every frame. For a Reader,
// WithLines(false) makes Lookup report line 0 everywhere.
func WithLines(on bool) Option { return func(o *options) { o.lines = on } }

// WithFiles says whether Write emits source file names (on by default);
// without them no range has a file or call file, and a function's
// depth-0 range is no longer split where its file changes. For a Reader,
// WithFiles(false) makes Lookup report no files.
func WithFiles(on bool) Option { return func(o *options) { o.files = on } }

// WithInlines says whether Write emits the ranges of inlined calls (on by
// default); without them the file has only the depth-0 ranges of the
// physical functions, whose line tables then give the physical function's
// own line (the call site, at inlined code), so that Lookup returns the
// last frame of gosym's ResolveLocations. For a Reader, WithInlines(false)
// makes Lookup return only that physical frame.
func WithInlines(on bool) Option { return func(o *options) { o.inlines = on } }
