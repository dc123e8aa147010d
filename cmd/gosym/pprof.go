package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
	"github.com/gosym-dev/gosym/profiles"
)

func runPprof(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("pprof")
	out := f.String("o", "", "write the symbolized profile to `OUT` (default standard output)")
	wrappers := f.Bool("wrappers", false, "keep compiler-generated wrapper frames")
	retAddrs := f.Bool("returnaddrs", false, "the profile holds raw return addresses: look callers up at address-1")
	mainPath := f.String("main", "", "symbolize the main mapping from `BINARY`, whatever its build ID")
	pos, status, ok := f.parse(args, 1, -1, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) < 2 && *mainPath == "" {
		fmt.Fprintf(stderr, "gosym pprof: missing arguments\n")
		f.printUsage(stderr, false)
		return exitUsage
	}
	profPath := pos[0]
	p, err := readProfile(profPath)
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	var opts []profiles.Option
	if *mainPath != "" {
		b, err := openBinary(*mainPath)
		if err != nil {
			return errorf(stderr, "%v", err)
		}
		defer b.Close()
		opts = append(opts, profiles.WithMain(b.tab))
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
	if st.Symbolized+st.Symbols == 0 && st.Locations > 0 {
		return errorf(stderr, "%s: no location was symbolized: the %d in mappings of the binaries given are in no function", profPath, st.Locations-st.Unmatched)
	}
	if *out == "" {
		*out = "-"
	}
	if err := writeOutput(*out, stdout, p.Write); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// maxInflation and minInflated bound what a compressed profile may
// decompress to: maxInflation times its size, or minInflated bytes for a
// small file. Profiles compress to a fifth of their size or so; a gzip
// bomb inflates a thousandfold.
const (
	maxInflation = 32
	minInflated  = 16 << 20
)

// gzipMagic opens a gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// readProfile reads and parses the profile at path (gzip-compressed or
// not, or a legacy text profile, as profile.Parse accepts). The file must
// be a regular file, as binaries must (a FIFO or /dev/zero would block or
// never end), and a compressed profile may inflate to maxInflation times
// its size at most (minInflated if more).
func readProfile(path string) (*profile.Profile, error) {
	file, err := mmapfile.Load(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	p, err := parseProfile(file.Bytes())
	runtime.KeepAlive(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// parseProfile parses the profile in data, as readProfile.
func parseProfile(data []byte) (*profile.Profile, error) {
	if bytes.HasPrefix(data, gzipMagic) {
		var err error
		if data, err = inflate(data, max(minInflated, maxInflation*int64(len(data)))); err != nil {
			return nil, err
		}
		if bytes.HasPrefix(data, gzipMagic) {
			return nil, errors.New("compressed twice")
		}
	}
	return profile.ParseData(data)
}

// errInflated reports a compressed profile larger than readProfile
// accepts.
var errInflated = errors.New("decompresses to too many bytes")

// inflate returns the gzip stream in data decompressed, or an error if
// that is more than limit bytes.
func inflate(data []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompressing profile: %w", err)
	}
	// The last 4 bytes of a gzip stream hold its decompressed size mod
	// 2^32: a hint (it may lie) that spares growing the buffer. Beyond
	// it, the buffer doubles, up to limit bytes: the allocations total
	// at most twice that.
	size := limit
	if len(data) >= 18 {
		size = min(size, int64(binary.LittleEndian.Uint32(data[len(data)-4:]))+1)
	}
	buf := make([]byte, 0, max(size, 512))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= limit {
				// Full: the stream must end here.
				var one [1]byte
				if n, err := io.ReadFull(zr, one[:]); n > 0 {
					return nil, fmt.Errorf("%w: more than %d from %d compressed", errInflated, limit, len(data))
				} else if err != io.EOF {
					return nil, fmt.Errorf("decompressing profile: %w", err)
				}
				return buf, nil
			}
			buf = append(make([]byte, 0, min(2*int64(cap(buf)), limit)), buf...)
		}
		n, err := zr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decompressing profile: %w", err)
		}
	}
}
