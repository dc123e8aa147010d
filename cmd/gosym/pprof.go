package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/profiles"
)

func runPprof(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("pprof")
	out := f.String("o", "", "write the symbolized profile to `OUT` (default standard output)")
	wrappers := f.Bool("wrappers", false, "keep compiler-generated wrapper frames")
	retAddrs := f.Bool("returnaddrs", false, "the profile holds raw return addresses: look callers up at address-1")
	pos, status, ok := f.parse(args, 2, -1, stdout, stderr)
	if !ok {
		return status
	}
	profPath := pos[0]
	p, err := readProfile(profPath)
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	var tabs []*gosym.Table
	for _, path := range pos[1:] {
		b, err := openBinary(path)
		if err != nil {
			return errorf(stderr, "%v", err)
		}
		defer b.Close()
		tabs = append(tabs, b.tab)
	}
	var opts []profiles.Option
	if *wrappers {
		opts = append(opts, profiles.WithWrappers())
	}
	if *retAddrs {
		opts = append(opts, profiles.WithReturnAddresses())
	}
	st, err := profiles.Symbolize(p, tabs, opts...)
	if err != nil {
		return errorf(stderr, "%s: %v", profPath, err)
	}
	if st.Symbolized == 0 && st.Locations > 0 {
		return errorf(stderr, "%s: no location is in a mapping of the binaries given (build IDs differ?)", profPath)
	}
	if *out == "" || *out == "-" {
		w := bufio.NewWriter(stdout)
		if err := p.Write(w); err != nil {
			return errorf(stderr, "%v", err)
		}
		if err := w.Flush(); err != nil {
			return errorf(stderr, "%v", err)
		}
		return exitOK
	}
	if err := writeProfile(*out, p); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// readProfile reads and parses the profile at path (gzip-compressed or
// not, or a legacy text profile, as profile.Parse accepts).
func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// writeProfile writes p to out through a temporary file renamed when
// complete, so that out is never left half written.
func writeProfile(out string, p *profile.Profile) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp*")
	if err != nil {
		return outError(out, err)
	}
	tmp.Chmod(0o644) // CreateTemp makes it 0600
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = p.Write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return outError(out, err)
	}
	return nil
}
