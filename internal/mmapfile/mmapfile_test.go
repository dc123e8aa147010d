package mmapfile_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/mmapfile"
	"github.com/gosym-dev/gosym/internal/objtest"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("gosym"), 10000)
	full := filepath.Join(dir, "full")
	empty := filepath.Join(dir, "empty")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(full, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{full}
	if err := os.Symlink(full, link); err == nil {
		names = append(names, link) // a link to a regular file is followed
	}
	for _, name := range names {
		d, err := mmapfile.Load(name)
		if err != nil || !bytes.Equal(d.Bytes(), want) {
			t.Fatalf("Load(%s): %v", name, err)
		}
		if runtime.GOOS == "linux" && !d.Mapped() {
			t.Errorf("Load(%s): a regular file was read, not mapped", name)
		}
	}

	// An empty file cannot be mapped: it is read.
	if d, err := mmapfile.Load(empty); err != nil || len(d.Bytes()) != 0 || d.Mapped() {
		t.Errorf("Load of an empty file: %v", err)
	}
	if _, err := mmapfile.Load(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// TestNotRegular checks that Load refuses, at once, files whose size says
// nothing of their contents: /dev/zero and /dev/urandom would be read
// forever, and opening a FIFO without a writer would block.
func TestNotRegular(t *testing.T) {
	for _, name := range objtest.NotRegular(t) {
		objtest.Within(t, 5*time.Second, "Load("+name+")", func() {
			d, err := mmapfile.Load(name)
			var pe *fs.PathError
			if !errors.Is(err, mmapfile.ErrNotRegular) || !errors.As(err, &pe) || pe.Path != name {
				t.Errorf("Load(%s) = %v, want a PathError wrapping ErrNotRegular", name, err)
			}
			if d != nil {
				t.Errorf("Load(%s) returned data", name)
			}
		})
	}
}

// TestRelease checks that a mapping stays while its Data is reachable and
// goes once it is not.
func TestRelease(t *testing.T) {
	name := filepath.Join(t.TempDir(), "file")
	want := bytes.Repeat([]byte("gosym"), 10000)
	if err := os.WriteFile(name, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if !loadAndCollect(t, name, want) {
		t.Skip("not mapped here")
	}
	objtest.WaitUnmapped(t, name)
}

// loadAndCollect loads name, collects garbage while the Data is reachable,
// and checks that the mapping stayed. It reports whether name was mapped.
func loadAndCollect(t *testing.T, name string, want []byte) bool {
	d, err := mmapfile.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	b := d.Bytes()
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if mapped, ok := objtest.InMaps(t, name); ok && d.Mapped() && !mapped {
		t.Fatal("mapping released while its Data is reachable")
	}
	if !bytes.Equal(b, want) {
		t.Fatal("contents changed")
	}
	runtime.KeepAlive(d)
	return d.Mapped()
}

// TestLoadReading checks that LoadReading calls read with the contents and
// a ReaderAt of the same bytes at the same offsets (short at the end, with
// io.EOF), and returns read's error.
func TestLoadReading(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789"), 1000)
	full, empty := filepath.Join(dir, "full"), filepath.Join(dir, "empty")
	if err := os.WriteFile(full, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{full, empty} {
		calls := 0
		d, err := mmapfile.LoadReading(name, func(b []byte, r io.ReaderAt) error {
			calls++
			for _, off := range []int{0, 1, 4095, 4096, len(b) - 3} {
				if off < 0 || off > len(b) {
					continue
				}
				p := make([]byte, 5)
				n, err := r.ReadAt(p, int64(off))
				wn := min(5, len(b)-off)
				if n != wn || !bytes.Equal(p[:n], b[off:off+n]) || (n < 5) != (err == io.EOF) {
					t.Errorf("%s: ReadAt(5 bytes at %d) = %d, %v, %q; want %d bytes %q", name, off, n, err, p[:n], wn, b[off:off+wn])
				}
			}
			return errors.New("read's error")
		})
		if calls != 1 || err == nil || err.Error() != "read's error" || !bytes.Equal(d.Bytes(), want[:len(d.Bytes())]) {
			t.Errorf("%s: %d calls, %v", name, calls, err)
		}
	}
}
