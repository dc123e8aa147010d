//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

// gzipBomb returns a gzip stream that decompresses to n×size zero bytes:
// n copies of one member (gzip readers read every member of a stream).
func gzipBomb(t testing.TB, size, n int) []byte {
	t.Helper()
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	zw.Write(make([]byte, size))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(one.Bytes(), n)
}

// TestReadProfileBounded checks what readProfile accepts (issue 21 item
// 5): regular files only, refused before reading (a FIFO blocked for
// ever, /dev/zero ran out of memory), and compressed profiles that
// inflate at most maxInflation times (minInflated bytes for small ones):
// a gzip bomb of 256 MiB is refused having allocated about the limit
// (it took 2.7 GB of memory for the reproducer r06's 1 GiB).
func TestReadProfileBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", dir} {
		if _, err := readProfile(path); !errors.Is(err, mmapfile.ErrNotRegular) {
			t.Errorf("readProfile(%s): %v, want an error wrapping ErrNotRegular", path, err)
		}
	}

	bomb := gzipBomb(t, 16<<20, 16) // 256 MiB of zeros in 256 KB
	lying := bytes.Clone(bomb)      // the same, whose size field (the last 4 bytes) says 10
	copy(lying[len(lying)-4:], []byte{10, 0, 0, 0})
	for _, c := range []struct {
		name string
		data []byte
	}{{"bomb", bomb}, {"lying", lying}} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		limit := max(minInflated, maxInflation*int64(len(c.data)))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := readProfile(path)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, errInflated) {
			t.Errorf("%s: readProfile: %v, want an error wrapping errInflated", c.name, err)
		}
		if !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: the error does not name the file: %v", c.name, err)
		}
		// Growing a buffer by doubling to limit allocates twice it.
		got := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%s: %d compressed bytes, limit %d: %d bytes allocated", c.name, len(c.data), limit, got)
		if got > 3*limit {
			t.Errorf("%s: readProfile allocated %d bytes, more than 3 × %d", c.name, got, limit)
		}
	}

	// A profile compressed twice (profile.ParseData would inflate the
	// inner stream without a limit).
	var inner, outer bytes.Buffer
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	p.Write(&inner)
	zw := gzip.NewWriter(&outer)
	zw.Write(inner.Bytes())
	zw.Close()
	twice := filepath.Join(dir, "twice")
	os.WriteFile(twice, outer.Bytes(), 0o644)
	if _, err := readProfile(twice); err == nil || !strings.Contains(err.Error(), "compressed twice") {
		t.Errorf("a profile compressed twice: %v", err)
	}
	once := filepath.Join(dir, "once")
	os.WriteFile(once, inner.Bytes(), 0o644)
	if _, err := readProfile(once); err != nil {
		t.Errorf("a profile: %v", err)
	}
}

// TestInflateLimit checks inflate at its limit: a stream of exactly limit
// bytes is accepted, one more byte is too many, whatever the stream's size
// field says.
func TestInflateLimit(t *testing.T) {
	const limit = 1000
	for _, size := range []int{0, 1, limit - 1, limit, limit + 1, 3 * limit} {
		for _, lie := range []bool{false, true} {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(bytes.Repeat([]byte{'x'}, size))
			zw.Close()
			data := z.Bytes()
			if lie {
				copy(data[len(data)-4:], []byte{7, 0, 0, 0}) // no size in the list
			}
			got, err := inflate(data, limit)
			switch {
			case size > limit:
				if !errors.Is(err, errInflated) {
					t.Errorf("%d bytes (size field lies: %v): %d bytes, %v; want errInflated", size, lie, len(got), err)
				}
			case lie:
				// The gzip reader checks the size field at the end.
				if err == nil {
					t.Errorf("%d bytes, size field says 7: no error", size)
				}
			case err != nil || len(got) != size:
				t.Errorf("%d bytes: %d bytes, %v", size, len(got), err)
			}
		}
	}
}
