package gosym

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestUseAfterClose checks the promise of Close: a Function obtained
// earlier, Info and every string keep returning what they returned
// before, with the garbage collector run in between (the file's memory
// was once unmapped by Close, and reading a Function then faulted); every
// lookup returns ErrClosed, which matches fs.ErrClosed; a second Close
// returns nil.
func TestUseAfterClose(t *testing.T) {
	tab, err := Open(selfPath(t))
	if err != nil {
		t.Fatal(err)
	}
	type getters struct {
		name, file       string
		entry, end       uint64
		start            uint32
		wrapper          bool
		firstLoc, caller string
	}
	get := func(f Function) getters {
		return getters{f.Name(), f.File(), f.Entry(), f.End(), f.StartLine(), f.Wrapper(), "", ""}
	}
	var fns []Function
	var before []getters
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		// (The race runtime's folded C++ functions can be empty.)
		if f.End() > f.Entry() && (len(fns) < 1000 || f.Name() == "github.com/gosym-dev/gosym/gosym.TestUseAfterClose") {
			fns = append(fns, f)
			g := get(f)
			locs, err := f.ResolveLocations(f.Entry(), nil)
			if err != nil {
				t.Fatal(err)
			}
			g.firstLoc = locs[0].Function + " " + locs[0].File
			before = append(before, g)
		}
	}
	info := tab.Info()
	version := tab.GoVersion()
	name := before[len(before)-1].name
	// A string handed out before Close, kept only in a copy of its header.
	kept := strings.Clone(name)
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	for i, f := range fns {
		g := get(f)
		g.firstLoc = before[i].firstLoc
		if g != before[i] {
			t.Fatalf("after Close, function %d: %+v, before %+v", i, g, before[i])
		}
	}
	if got := tab.Info(); got != info {
		t.Errorf("Info after Close = %+v, before %+v", got, info)
	}
	if tab.GoVersion() != version || name != kept {
		t.Errorf("strings changed after Close: %q %q", tab.GoVersion(), name)
	}

	f := fns[0]
	pc := f.Entry()
	closed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrClosed) || !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed, matching fs.ErrClosed", what, err)
		}
	}
	_, err = tab.ResolveLocations(pc, nil)
	closed("Table.ResolveLocations", err)
	_, err = tab.ResolveFunction(pc)
	closed("ResolveFunction", err)
	_, err = tab.LookupFunction(name)
	closed("LookupFunction", err)
	for _, err := range tab.LookupFunctions(name) {
		closed("LookupFunctions", err)
	}
	_, err = tab.LinePCs("x.go", 1, nil)
	closed("LinePCs", err)
	for f := range tab.Files() {
		t.Errorf("Files after Close yields %q", f)
	}
	if bi, err := tab.BuildInfo(); err != nil || bi.GoVersion != version {
		t.Errorf("BuildInfo after Close: %v, %v; want the build info", bi, err)
	}
	for _, err := range tab.Functions() {
		closed("Functions", err)
	}
	_, err = f.ResolveLocations(pc, nil)
	closed("Function.ResolveLocations", err)
	_, err = f.Lines(nil)
	closed("Lines", err)
	_, err = f.InlinedCalls(nil)
	closed("InlinedCalls", err)
	_, err = f.InlineFunctions(nil)
	closed("InlineFunctions", err)
	_, err = f.SPDelta(pc)
	closed("SPDelta", err)
	for _, err := range tab.Unwind(Regs{PC: pc}, nil) {
		closed("Unwind", err)
	}
	if err := tab.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseReleases checks that the memory of a Table made by Open is
// released once nothing refers to the Table: the file leaves the process's
// mappings.
func TestCloseReleases(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	// A copy of the test binary, so that no other mapping names it.
	path := t.TempDir() + "/copy"
	data, err := os.ReadFile(selfPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped := func() bool {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(maps), path)
	}
	func() {
		tab, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if !mapped() {
			t.Fatal("the file is not mapped while the Table is open")
		}
		if _, err := tab.ResolveFunction(tab.Info().TextStart); err != nil {
			t.Fatal(err)
		}
		tab.Close()
	}()
	for range 50 {
		runtime.GC()
		if !mapped() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the file is still mapped after Close, with nothing referring to the Table")
}

// TestCloseDuringLookups closes a Table while goroutines resolve PCs in
// it: no lookup faults, and each returns its answer or ErrClosed.
func TestCloseDuringLookups(t *testing.T) {
	tab, err := Open(selfPath(t))
	if err != nil {
		t.Fatal(err)
	}
	pcs := samplePCs(t, tab, 2000)
	done := make(chan error)
	for g := range 4 {
		go func() {
			var locs []Location
			var err error
			for i := 0; ; i++ {
				locs, err = tab.ResolveLocations(pcs[(i+g*500)%len(pcs)], locs)
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						done <- err
						return
					}
					done <- nil
					return
				}
				if i%256 == 0 {
					runtime.GC()
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	tab.Close()
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
