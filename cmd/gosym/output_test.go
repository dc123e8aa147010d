//go:build unix

package main

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/lidia"
)

// writeNew is an output: the bytes "new\n".
func writeNew(w io.Writer) error {
	_, err := io.WriteString(w, "new\n")
	return err
}

// fileType returns the type bits of the file at path, without following
// a link.
func fileType(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Type()
}

// readFIFO opens the FIFO at path for reading, without waiting for a
// writer, and reads it until the returned function is called, once the
// writer is done: that function returns what was read. (A reader that
// opened the FIFO only once a writer had may come too late, after the
// writer is gone; and one that does not wait sees an end of file until a
// writer comes.)
func readFIFO(t *testing.T, path string) (written func() string) {
	t.Helper()
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	got := make(chan string, 1)
	go func() {
		defer r.Close()
		var b []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			b = append(b, buf[:n]...)
			switch {
			case err == io.EOF:
				select {
				case <-done:
					// The writer has closed the FIFO: everything it
					// wrote has been read.
					got <- string(b)
					return
				default:
					time.Sleep(time.Millisecond) // no writer yet
				}
			case err != nil:
				got <- "read: " + err.Error()
				return
			}
		}
	}()
	return func() string {
		close(done)
		return <-got
	}
}

// leftovers returns the names of dir's entries that look like temporary
// files.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

// TestWriteOutput checks that writeOutput replaces regular files only:
// what OUT is (a file, a link, a FIFO, a device, a directory, a socket)
// decides how it is written, and nothing but a regular file becomes a new
// file (issue 21 item 1: a FIFO, a device node or a symbolic link became
// a regular file).
func TestWriteOutput(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }

	t.Run("new", func(t *testing.T) {
		if err := writeOutput(path("new"), nil, writeNew); err != nil {
			t.Fatal(err)
		}
		checkFile(t, path("new"), "new\n", 0o644)
	})
	t.Run("regular", func(t *testing.T) {
		os.WriteFile(path("regular"), []byte("old\n"), 0o600)
		os.Chmod(path("regular"), 0o600)
		if err := writeOutput(path("regular"), nil, writeNew); err != nil {
			t.Fatal(err)
		}
		checkFile(t, path("regular"), "new\n", 0o600)
	})
	t.Run("symlink", func(t *testing.T) {
		os.WriteFile(path("target"), []byte("old\n"), 0o644)
		os.Symlink("target", path("link"))
		if err := writeOutput(path("link"), nil, writeNew); err != nil {
			t.Fatal(err)
		}
		if typ := fileType(t, path("link")); typ != fs.ModeSymlink {
			t.Errorf("link is now %v", typ)
		}
		checkFile(t, path("target"), "new\n", 0o644)
	})
	t.Run("dangling", func(t *testing.T) {
		os.Symlink("absent", path("dangling"))
		if err := writeOutput(path("dangling"), nil, writeNew); err != nil {
			t.Fatal(err)
		}
		if typ := fileType(t, path("dangling")); typ != fs.ModeSymlink {
			t.Errorf("link is now %v", typ)
		}
		checkFile(t, path("absent"), "new\n", 0)
	})
	t.Run("fifo", func(t *testing.T) {
		if err := syscall.Mkfifo(path("fifo"), 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		written := readFIFO(t, path("fifo"))
		if err := writeOutput(path("fifo"), nil, writeNew); err != nil {
			t.Fatal(err)
		}
		if typ := fileType(t, path("fifo")); typ != fs.ModeNamedPipe {
			t.Fatalf("FIFO is now %v", typ)
		}
		if s := written(); s != "new\n" {
			t.Errorf("read from the FIFO %q, want %q", s, "new\n")
		}
	})
	t.Run("fifo without reader", func(t *testing.T) {
		if err := syscall.Mkfifo(path("lonely"), 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		err := writeOutput(path("lonely"), nil, writeNew)
		var oe *outputError
		if !errors.As(err, &oe) || !errors.Is(err, syscall.ENXIO) {
			t.Errorf("got %v, want an *outputError wrapping ENXIO", err)
		}
		if typ := fileType(t, path("lonely")); typ != fs.ModeNamedPipe {
			t.Errorf("FIFO is now %v", typ)
		}
	})
	t.Run("device", func(t *testing.T) {
		// A link to /dev/null, and (as root) a node of its own.
		os.Symlink("/dev/null", path("devnull-link"))
		names := []string{path("devnull-link")}
		if err := syscall.Mknod(path("devnull"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			names = append(names, path("devnull"))
		} else {
			t.Logf("mknod: %v (checking the link only)", err)
		}
		for _, name := range names {
			if err := writeOutput(name, nil, writeNew); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if typ := fileType(t, path("devnull-link")); typ != fs.ModeSymlink {
			t.Errorf("link is now %v", typ)
		}
		if typ := fileType(t, "/dev/null"); typ != fs.ModeDevice|fs.ModeCharDevice {
			t.Errorf("/dev/null is now %v", typ)
		}
		if len(names) > 1 {
			if typ := fileType(t, path("devnull")); typ != fs.ModeDevice|fs.ModeCharDevice {
				t.Errorf("the device node is now %v", typ)
			}
		}
	})
	t.Run("full", func(t *testing.T) {
		// A copy of /dev/full, where every write fails: the error names
		// OUT, and the node stays.
		if err := syscall.Mknod(path("full"), syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
			t.Skip("mknod:", err)
		}
		err := writeOutput(path("full"), nil, writeNew)
		var oe *outputError
		if !errors.As(err, &oe) || !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), path("full")+": ") {
			t.Errorf("writing a copy of /dev/full: %v, want an *outputError wrapping ENOSPC", err)
		}
		if typ := fileType(t, path("full")); typ != fs.ModeDevice|fs.ModeCharDevice {
			t.Errorf("the device node is now %v", typ)
		}
	})
	t.Run("refused", func(t *testing.T) {
		os.Mkdir(path("dir"), 0o755)
		names := []string{path("dir")}
		if l, err := net.Listen("unix", path("sock")); err == nil {
			defer l.Close()
			names = append(names, path("sock"))
		}
		for _, name := range names {
			typ := fileType(t, name)
			err := writeOutput(name, nil, writeNew)
			var oe *outputError
			if !errors.As(err, &oe) || oe.out != name {
				t.Errorf("%s: %v, want an *outputError", name, err)
			}
			if now := fileType(t, name); now != typ {
				t.Errorf("%s: now %v, was %v", name, now, typ)
			}
		}
	})
	t.Run("failing", func(t *testing.T) {
		// What write fails with is returned as it is, and an existing
		// OUT is left as it was.
		os.WriteFile(path("kept"), []byte("old\n"), 0o644)
		errProducer := errors.New("producer failed")
		err := writeOutput(path("kept"), nil, func(w io.Writer) error {
			writeNew(w)
			return errProducer
		})
		var oe *outputError
		if err != errProducer || errors.As(err, &oe) {
			t.Errorf("got %v, want the producer's error", err)
		}
		checkFile(t, path("kept"), "old\n", 0o644)
	})
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// checkFile checks that path is a regular file holding want, with the
// permission bits perm unless 0.
func checkFile(t *testing.T, path, want string, perm fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || perm != 0 && fi.Mode().Perm() != perm {
		t.Errorf("%s: mode %v, want a regular file %v", path, fi.Mode(), perm)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("%s holds %q, want %q", path, b, want)
	}
}

// TestOutputSpecialFiles runs gosym lidia and gosym pprof with -o naming a
// FIFO and a symbolic link (the reproducer r02 of issue 21): each is
// written through, and stays what it was.
func TestOutputSpecialFiles(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	written := readFIFO(t, fifo)
	mustRun(t, "", "lidia", "-o", fifo, b.Path)
	if typ := fileType(t, fifo); typ != fs.ModeNamedPipe {
		t.Fatalf("lidia -o FIFO: the FIFO is now %v", typ)
	}
	if r, err := lidia.NewReader([]byte(written())); err != nil {
		t.Errorf("read from the FIFO: %v", err)
	} else {
		r.Close()
	}

	// A profile without mappings: link-time addresses.
	tab := openTable(t, b.Path)
	var entry uint64
	for fn := range tab.Functions() {
		entry = fn.Entry()
		break
	}
	loc := &profile.Location{ID: 1, Address: entry}
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Location:   []*profile.Location{loc},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1}}},
	}
	in := filepath.Join(dir, "in.pb.gz")
	writeProfileFile(t, in, prof)
	target := filepath.Join(dir, "target.pb.gz")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink("target.pb.gz", link)
	mustRun(t, "", "pprof", "-o", link, in, b.Path)
	if typ := fileType(t, link); typ != fs.ModeSymlink {
		t.Errorf("pprof -o LINK: the link is now %v", typ)
	}
	if p, err := readProfile(target); err != nil {
		t.Errorf("pprof -o LINK: the link's target: %v", err)
	} else if len(p.Function) == 0 {
		t.Errorf("pprof -o LINK: the link's target holds no function")
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
