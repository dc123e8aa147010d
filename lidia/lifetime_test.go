package lidia

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// TestOpenNotRegular checks that Open refuses devices, FIFOs, sockets and
// directories at once, naming the file.
func TestOpenNotRegular(t *testing.T) {
	objtest.CheckOpenNotRegular(t, "Open", func(name string) error {
		r, err := Open(name)
		if r != nil {
			r.Close()
		}
		return err
	})
}

// writeSelf writes the Lidia file of the test binary to dir and returns
// its name and some PCs.
func writeSelf(t *testing.T, dir string) (string, []uint64) {
	tab := selfTable(t)
	name := filepath.Join(dir, "self.lidia")
	if err := os.WriteFile(name, writeBytes(t, tab), 0o644); err != nil {
		t.Fatal(err)
	}
	return name, samplePCs(t, tab, 200)
}

// TestCloseDuringLookup closes a Reader made by Open while goroutines look
// up: each Lookup gives frames or ErrClosed, and nothing faults.
func TestCloseDuringLookup(t *testing.T) {
	name, pcs := writeSelf(t, t.TempDir())
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []gosym.Location
			for {
				for _, pc := range pcs {
					var err error
					if dst, err = r.Lookup(pc, dst); err == ErrClosed {
						return
					} else if err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	time.Sleep(10 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// TestRelease checks that the mapping of a Reader goes once the Reader is
// unreachable, closed or not, and that the strings it returned stay valid.
func TestRelease(t *testing.T) {
	for _, closeIt := range []bool{true, false} {
		name, pcs := writeSelf(t, t.TempDir())
		frames, mapped := lookupAndDrop(t, name, pcs, closeIt)
		if !mapped {
			t.Skip("not mapped here")
		}
		want := make([]gosym.Location, len(frames))
		for i, f := range frames {
			want[i] = gosym.Location{Function: strings.Clone(f.Function), File: strings.Clone(f.File), Line: f.Line}
		}
		objtest.WaitUnmapped(t, name)
		for i, f := range frames {
			if f != want[i] {
				t.Fatalf("frame %d: %+v after release, was %+v", i, f, want[i])
			}
		}
	}
}

// lookupAndDrop opens name, looks up pcs and closes the Reader if closeIt.
// It returns the frames and whether the file was mapped.
func lookupAndDrop(t *testing.T, name string, pcs []uint64, closeIt bool) ([]gosym.Location, bool) {
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var frames []gosym.Location
	for _, pc := range pcs {
		dst, err := r.Lookup(pc, nil)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, dst...)
	}
	mapped, ok := objtest.InMaps(t, name)
	if closeIt {
		r.Close()
	}
	if len(frames) == 0 {
		t.Fatal("no frames")
	}
	return frames, ok && mapped
}
