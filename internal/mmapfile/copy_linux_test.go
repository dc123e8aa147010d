package mmapfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/mmapfile"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// TestCopy checks Data.Copy and ReadAt of a file LoadReading mapped: they
// give the contents at the slice's (the offset's) place, read with pread
// while the file is open (no page of the mapping is present after them),
// from memory after Close (which closes the file: it leaves
// /proc/self/fd), and Copy of bytes that are not the Data's copies them.
func TestCopy(t *testing.T) {
	name := filepath.Join(t.TempDir(), "file")
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7 / 5)
	}
	if err := os.WriteFile(name, want, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := mmapfile.LoadReading(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Mapped() {
		t.Skip("not mapped here")
	}
	b := d.Bytes()
	check := func(when string) {
		t.Helper()
		for _, r := range [][2]int{{0, 1}, {4095, 4097}, {100000, 300000}, {len(want) - 3, len(want)}} {
			dst := make([]byte, r[1]-r[0]+5)
			if n := d.Copy(dst, b[r[0]:r[1]]); n != r[1]-r[0] || !bytes.Equal(dst[:n], want[r[0]:r[1]]) {
				t.Errorf("%s: Copy of bytes %d to %d: %d bytes, equal %v", when, r[0], r[1], n, bytes.Equal(dst[:n], want[r[0]:r[1]]))
			}
			if n, _ := d.ReadAt(dst[:r[1]-r[0]], int64(r[0])); n != r[1]-r[0] || !bytes.Equal(dst[:n], want[r[0]:r[1]]) {
				t.Errorf("%s: ReadAt of bytes %d to %d: %d bytes", when, r[0], r[1], n)
			}
		}
		other := []byte("not the file's")
		if dst := make([]byte, 5); d.Copy(dst, other) != 5 || string(dst) != "not t" {
			t.Errorf("%s: Copy of other bytes: %q", when, dst)
		}
	}
	check("open")
	if pages, _ := objtest.MappedPages(t, name); pages != 0 {
		t.Errorf("Copy and ReadAt read %d pages of the mapping; want 0", pages)
	}
	if !fdOpen(t, name) {
		t.Error("the file is not open before Close")
	}
	d.Close()
	if fdOpen(t, name) {
		t.Error("the file is still open after Close")
	}
	check("closed")
	d.Close()
	runtime.KeepAlive(d)
}

// fdOpen reports whether a descriptor of this process is open on name.
func fdOpen(t *testing.T, name string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasSuffix(target, name) {
			return true
		}
	}
	return false
}
