package gosym

import (
	"bytes"
	"slices"
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
