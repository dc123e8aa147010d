package object_test

import (
	"os"
	"path/filepath"
	"runtime"
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
