package objtest

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// NotRegular returns names of files that are not regular files, for tests
// that opening them fails at once: a directory, a symbolic link to it, and
// where the system has them /dev/zero, /dev/urandom, a FIFO without a
// writer and a Unix socket (made in a temporary directory).
func NotRegular(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		link = ""
	}
	names := []string{dir}
	if link != "" {
		names = append(names, link)
	}
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err == nil {
			names = append(names, dev)
		}
	}
	return append(names, special(t, dir)...)
}

// Within runs f, failing the test if it has not returned after d (as when
// opening a FIFO blocks).
func Within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

// InMaps reports whether the named file is mapped into this process, as
// /proc/self/maps shows. ok is false where there is no /proc/self/maps.
func InMaps(t *testing.T, name string) (mapped, ok bool) {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return false, false
	}
	defer f.Close()
	abs, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), " "+abs) {
			return true, true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return false, true
}

// WaitUnmapped runs the garbage collector until the named file is no
// longer mapped (cleanups run on their own goroutine, after a collection),
// failing the test if it still is after a few seconds. It skips the test
// where there is no /proc/self/maps.
func WaitUnmapped(t *testing.T, name string) {
	t.Helper()
	for i := 0; ; i++ {
		runtime.GC()
		mapped, ok := InMaps(t, name)
		if !ok {
			t.Skip("no /proc/self/maps")
		}
		if !mapped {
			return
		}
		if i == 100 {
			t.Fatalf("%s still mapped after %d collections", name, i)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// NotRegularMessage returns how the error of opening name, one of the
// files NotRegular returns, must end: "NAME: is a directory" or
// "NAME: not a regular file".
func NotRegularMessage(name string) string {
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return name + ": is a directory"
	}
	return name + ": not a regular file"
}

// CheckOpenNotRegular checks that open refuses every file NotRegular
// makes within 5 seconds, with an *fs.PathError naming the file and
// ending with NotRegularMessage. open returns the error of opening (and
// closes whatever it opened).
func CheckOpenNotRegular(t *testing.T, what string, open func(name string) error) {
	t.Helper()
	for _, name := range NotRegular(t) {
		Within(t, 5*time.Second, what+"("+name+")", func() {
			err := open(name)
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != name || !strings.HasSuffix(err.Error(), NotRegularMessage(name)) {
				t.Errorf("%s(%s) = %v, want a PathError ending %q", what, name, err, NotRegularMessage(name))
			}
		})
	}
}
