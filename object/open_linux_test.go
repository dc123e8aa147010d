package object_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// TestOpenReadsHeadersWithPread checks that Open of an ELF file reads its
// headers with pread, not through the mapping: no page of the freshly
// mapped file is in the page table after it (each would have cost a page
// fault, BENCHMARKS.md "Big binaries"), and the sections are those
// NewBytes reads.
func TestOpenReadsHeadersWithPread(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxAMD64)
	path := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(path, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := object.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := objtest.MappedPages(t, path)
	if pages != 0 {
		t.Errorf("Open read %d pages of the mapping; want 0", pages)
	}
	want, err := object.NewBytes(bin)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := want.Sections()
	gs, _ := f.Sections()
	if len(gs) != len(ws) {
		t.Fatalf("%d sections; NewBytes reads %d", len(gs), len(ws))
	}
	for i := range ws {
		if gs[i] != ws[i] {
			t.Errorf("section %d: %+v; NewBytes reads %+v", i, gs[i], ws[i])
		}
	}
	runtime.KeepAlive(f)
}

// TestOpenUnknownClosesFile checks that Open of a file that is not an
// object leaves no descriptor open (it keeps one only for the File it
// returns), with the garbage collector off so that no cleanup closes it.
func TestOpenUnknownClosesFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(name, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := fds()
	for range 100 {
		if _, err := object.Open(name); !errors.Is(err, object.ErrUnknownFormat) {
			t.Fatalf("Open: %v, want ErrUnknownFormat", err)
		}
	}
	if n := fds() - before; n > 5 {
		t.Errorf("100 failed Opens left %d more descriptors open", n)
	}
}
