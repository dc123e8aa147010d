package gosym

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
)

// TestPclntabOfModuledata checks that a binary whose pclntab has neither a
// section nor symbols of its own (an externally linked PIE, such as
// Debian's dockerd, keeps it in .data.rel.ro) gets it from
// runtime.firstmoduledata, not by a scan of the data: the test program
// with its .gopclntab section and its pclntab symbols renamed answers
// like the original, from the same table.
func TestPclntabOfModuledata(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxAMD64)
	// ".gopclntab", "runtime.pclntab", "runtime.epclntab" end so.
	if bytes.Count(bin, []byte("pclntab\x00")) < 3 {
		t.Fatal("the test program has no pclntab section and symbols to rename")
	}
	renamed := bytes.ReplaceAll(bin, []byte("pclntab\x00"), []byte("pclntaX\x00"))
	want, got := mustTable(t, bin), mustTable(t, renamed)
	gi, wi := got.Info(), want.Info()
	if gi.FoundBy != "symbol runtime.firstmoduledata" {
		t.Errorf("pclntab found by %q, want symbol runtime.firstmoduledata", gi.FoundBy)
	}
	if gi.PclntabAddr != wi.PclntabAddr || gi.PclntabSize > wi.PclntabSize || gi.NumFuncs != wi.NumFuncs {
		t.Errorf("pclntab at %#x, %d bytes, %d functions; want %#x, at most %d, %d",
			gi.PclntabAddr, gi.PclntabSize, gi.NumFuncs, wi.PclntabAddr, wi.PclntabSize, wi.NumFuncs)
	}
	var wl, gl []Location
	for _, pc := range samplePCs(t, want, 2000) {
		var err1, err2 error
		wl, err1 = want.ResolveLocations(pc, wl)
		gl, err2 = got.ResolveLocations(pc, gl)
		if err1 != nil || err2 != nil || !slices.Equal(wl, gl) {
			t.Fatalf("pc %#x: %v, %v; want %v, %v", pc, gl, err2, wl, err1)
		}
	}
}

// TestOpenAllocationsBySymbol is TestOpenAllocations for binaries whose
// tables Open finds by symbol: the test program and the go command (13
// times more symbols) with their .gopclntab and .go.module sections and
// their pclntab symbols renamed, so that Open looks up
// runtime.firstmoduledata for both the pclntab and the moduledata. The
// allocations must be the same: no symbol map, nothing per symbol.
func TestOpenAllocationsBySymbol(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goCmd, err := os.ReadFile(benchBinary(t, "go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	allocs := map[string]float64{}
	for name, bin := range map[string][]byte{"test program": objtest.Binary(t, objtest.LinuxAMD64), "go": goCmd} {
		bin = bytes.ReplaceAll(bin, []byte("pclntab\x00"), []byte("pclntaX\x00"))
		bin = bytes.ReplaceAll(bin, []byte(".go.module\x00"), []byte(".go.modulX\x00"))
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, bin, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if in := tab.Info(); in.FoundBy != "symbol runtime.firstmoduledata" || in.ModuledataFoundBy != "symbol runtime.firstmoduledata" {
			t.Errorf("%s: pclntab found by %q, moduledata by %q; want both by symbol runtime.firstmoduledata", name, in.FoundBy, in.ModuledataFoundBy)
		}
		tab.Close()
		allocs[name] = testing.AllocsPerRun(10, func() {
			tab, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tab.Close()
		})
	}
	if allocs["test program"] != allocs["go"] {
		t.Errorf("Open allocates %v times for the test program, %v for go", allocs["test program"], allocs["go"])
	}
	t.Logf("Open allocates %v times", allocs["go"])
}
