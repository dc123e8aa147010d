package object_test

import (
	"bytes"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// TestOpenNotRegular checks that Open refuses devices, FIFOs, sockets and
// directories at once, naming the file.
func TestOpenNotRegular(t *testing.T) {
	objtest.CheckOpenNotRegular(t, "Open", func(name string) error {
		f, err := object.Open(name)
		if f != nil {
			f.Close()
		}
		return err
	})
}

// TestDataAfterClose checks that bytes SectionData returned stay readable,
// unchanged, after Close and garbage collections, while the File is
// reachable.
func TestDataAfterClose(t *testing.T) {
	name := objtest.Path(t, objtest.LinuxAMD64)
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := object.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := f.Sections()
	if err != nil {
		t.Fatal(err)
	}
	i := objtest.FindSection(hs, ".gopclntab")
	data, err := f.SectionData(i)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if want := raw[hs[i].Offset : hs[i].Offset+hs[i].FileSize]; !bytes.Equal(data, want) {
		t.Error("section data changed after Close")
	}
	runtime.KeepAlive(f)
}

// TestRelease checks that the mapping of a File goes once the File is
// unreachable, Closed or not.
func TestRelease(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(objtest.Path(t, objtest.LinuxAMD64))
	if err != nil {
		t.Fatal(err)
	}
	for _, closeIt := range []bool{true, false} {
		name := filepath.Join(dir, "closed")
		if !closeIt {
			name = filepath.Join(dir, "open")
		}
		if err := os.WriteFile(name, src, 0o666); err != nil {
			t.Fatal(err)
		}
		if !openAndDrop(t, name, closeIt) {
			t.Skip("not mapped here")
		}
		objtest.WaitUnmapped(t, name)
	}
}

// openAndDrop opens name, reads a section, and closes the File if closeIt.
// It reports whether the File was mapped.
func openAndDrop(t *testing.T, name string, closeIt bool) bool {
	f, err := object.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.SectionData(1); err != nil {
		t.Fatal(err)
	}
	mapped, ok := objtest.InMaps(t, name)
	if closeIt {
		f.Close()
	}
	return ok && mapped
}

// TestSymbolsKeepFile checks that the iterator Symbols returns keeps its
// File's memory while it runs, when the caller holds nothing else (as
// FuncSymbols does): the decoder reads the mapping, which goes once the
// File is unreachable. Before, a collection in the loop unmapped it and
// the next symbol faulted.
func TestSymbolsKeepFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "prog")
	src, err := os.ReadFile(objtest.Path(t, objtest.LinuxAMD64))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, src, 0o666); err != nil {
		t.Fatal(err)
	}
	seq := func() iter.Seq2[object.Symbol, error] {
		f, err := object.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		return f.Symbols()
	}()
	n := 0
	for _, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		if n%500 == 0 {
			// Collect, and give the cleanup goroutine time to run.
			for range 3 {
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			if mapped, ok := objtest.InMaps(t, name); !ok {
				t.Skip("no /proc/self/maps")
			} else if !mapped {
				t.Fatalf("unmapped after %d symbols", n)
			}
		}
		n++
	}
	if n < 100 {
		t.Errorf("%d symbols", n)
	}
}
