package symbfile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/object"
)

// TestBudget checks that Write stops, with an error wrapping
// gosym.ErrCorrupted, once the records or the names it has made exceed
// the budget (here a small one, on a sound binary).
func TestBudget(t *testing.T) {
	tab := selfTable(t)
	if got, want := limit(tab.Object()), 1<<20; got < want {
		t.Fatalf("budget %d, less than %d", got, want)
	}
	for _, c := range []struct {
		names, entries int
		want           string
	}{{0, 990, "records and line entries"}, {990, 0, "names total"}} {
		b := &builder{w: io.Discard, strIdx: map[string]int32{}, budget: 1000, names: c.names, entries: c.entries}
		err := b.addAllRanges(tab)
		if !errors.Is(err, gosym.ErrCorrupted) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("over the budget: %v; want ErrCorrupted saying %q", err, c.want)
		}
	}
}

// TestBudgetPads checks that Write with return pads stops, with an error
// wrapping gosym.ErrCorrupted, once the names or pad frames exceed the
// budget,
// while the goroutine that finds the calls is still sending them: the
// error comes back, and the goroutine ends (the race detector sees it, in
// the race tests).
func TestBudgetPads(t *testing.T) {
	tab := selfTable(t)
	find, err := callFinderFor(tab.Object().(object.Describer).Arch(), tab.Object())
	if err != nil {
		t.Skip(err)
	}
	for _, budget := range []int{0, 1000, 100000} {
		b := &builder{w: io.Discard, strIdx: map[string]int32{}, pads: true, budget: budget}
		err := b.addAllPads(tab, find)
		if !errors.Is(err, gosym.ErrCorrupted) || !strings.Contains(err.Error(), "out of proportion") {
			t.Errorf("budget %d: %v; want ErrCorrupted saying the file is out of proportion", budget, err)
		}
	}
}

// TestSharedCases writes symbfiles for the damaged binaries of the third
// round of issues (../shared/cases/round3, beside the repository; skipped
// without them): Write either succeeds or fails with an error wrapping
// gosym.ErrCorrupted, and allocates at most 40 times the binary's size.
// r04 (functions sharing one line table of a line per byte, which would
// make a file 16 times the binary, 38 MB, in 10 s and 328 MB) is over the
// budget.
func TestSharedCases(t *testing.T) {
	paths, _ := filepath.Glob("../../shared/cases/round3/r*.bin.gz")
	if len(paths) == 0 {
		t.Skip("../shared/cases is not beside the repository")
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".bin.gz")
		t.Run(name, func(t *testing.T) {
			bin := gunzip(t, p)
			obj, err := object.NewBytes(bin)
			if err != nil {
				t.Skip(err)
			}
			tab, err := gosym.NewTable(obj)
			if err != nil {
				t.Skip(err)
			}
			for _, pads := range []bool{false, true} {
				var out countingWriter
				n := alloctest.Bytes(func() { err = Write(&out, tab, WithReturnPads(pads)) })
				t.Logf("return pads %v: %d bytes written, %d allocated (%.1f × the binary): %v", pads, out.n, n, float64(n)/float64(len(bin)), err)
				if err != nil && !errors.Is(err, gosym.ErrCorrupted) && !strings.Contains(err.Error(), "no section holds the code") {
					t.Errorf("return pads %v: %v", pads, err)
				}
				if n > 40*uint64(len(bin)) {
					t.Errorf("return pads %v: %d bytes allocated, more than 40 × %d", pads, n, len(bin))
				}
				if strings.HasPrefix(name, "r04") && !pads && !errors.Is(err, gosym.ErrCorrupted) {
					t.Errorf("r04: %v; want an error wrapping ErrCorrupted", err)
				}
			}
		})
	}
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
