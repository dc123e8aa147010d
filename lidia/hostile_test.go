package lidia

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// corpusEntries returns the corpus entries named, failing the test for one
// missing.
func corpusEntries(t *testing.T, names ...string) []testcorpus.Entry {
	t.Helper()
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var out []testcorpus.Entry
	for _, name := range names {
		found := false
		for _, e := range entries {
			if e.Name == name {
				out, found = append(out, e), true
			}
		}
		if !found {
			t.Fatalf("corpus has no %s", name)
		}
	}
	return out
}

// TestNoMarkers checks that no range is written for the symbols the Go
// linker puts at the start and end of the text (runtime.text,
// runtime.etext; text and etext in Go 1.2): they are not functions, and
// where ResolveLocations has no function, Lookup gave one (issue 21 item
// 12, a one-byte range of runtime.etext). In binaries without C code,
// every depth-0 range starts in a Go function.
func TestNoMarkers(t *testing.T) {
	for _, e := range corpusEntries(t, "go1.26.8.linux-amd64", "go1.2.2.linux-amd64", "go1.19.13.plan9-amd64", "go1.16.15.windows-amd64") {
		t.Run(e.Name, func(t *testing.T) {
			tab := entryTable(t, e)
			markers := 0
			for _, s := range object.FuncSymbols(tab.Object()) {
				if isMarker(s.Name) {
					markers++
				}
			}
			if e.Name == "go1.26.8.linux-amd64" && markers < 2 {
				t.Errorf("%d marker symbols, want the start and end of the text", markers)
			}
			r := newReader(t, writeBytes(t, tab))
			for i, p := range decodeRanges(t, r) {
				if isMarker(p.Function) {
					t.Errorf("range %d at %#x (%d bytes) is the marker %s", i, p.VA, p.Length, p.Function)
				}
				if p.Depth != 0 {
					continue
				}
				if _, err := tab.ResolveFunction(p.VA); err != nil {
					t.Errorf("range %d at %#x (%d bytes), %s: no Go function there: %v", i, p.VA, p.Length, p.Function, err)
				}
			}
		})
	}
	for name, want := range map[string]bool{
		"runtime.text": true, "runtime.etext": true, "runtime.text.1": true, "runtime.text.12": true,
		"text": true, "etext": true,
		"runtime.text.": false, "runtime.text.x": false, "runtime.textOff": false, "main.text": false, "_etext": false,
	} {
		if isMarker(name) != want {
			t.Errorf("isMarker(%q) = %v", name, !want)
		}
	}
}

// TestNamesBounded checks that Write's output and memory stay in
// proportion with the binary when its function names run together (the
// reproducer r05 of issue 21: the NUL bytes of the function-name table
// replaced, so that every name runs to the end of the table; Write made a
// 123 MB file from a 2.4 MB binary and allocated 1 GB): an error wrapping
// gosym.ErrCorrupted, having allocated at most a few times the binary.
func TestNamesBounded(t *testing.T) {
	e := corpusEntries(t, "go1.26.8.linux-amd64")[0]
	bin, err := e.Binary()
	if err != nil {
		t.Fatal(err)
	}
	bin = bytes.Clone(bin)
	sound := writeAllocs(t, bin)
	// The function-name table of a Go 1.18+ pclntab (runtime.pcHeader):
	// from funcnameOffset to cuOffset, 64-bit words at 32 and 40.
	h, err := testcorpus.FindPclntab(bin)
	if err != nil {
		t.Fatal(err)
	}
	hdr := bin[h.Offset:]
	lo, hi := h.Offset+int64(binary.LittleEndian.Uint64(hdr[32:])), h.Offset+int64(binary.LittleEndian.Uint64(hdr[40:]))
	if h.PtrSize != 8 || h.BigEndian || lo >= hi || hi > int64(len(bin)) {
		t.Fatalf("pclntab header %+v: names at [%#x, %#x)", h, lo, hi)
	}
	names := bytes.Count(bin[lo:hi], []byte{0})
	for i := lo; i < hi; i++ {
		if bin[i] == 0 {
			bin[i] = 'x'
		}
	}

	n, alloc, err := writeStats(bin)
	t.Logf("%d names run together in a binary of %d bytes: %d bytes written, %d allocated (%d for the sound binary); %v", names, len(bin), n, alloc, sound, err)
	if !errors.Is(err, gosym.ErrCorrupted) {
		t.Errorf("Write: %v, want an error wrapping gosym.ErrCorrupted", err)
	}
	if n > int64(len(bin)) {
		t.Errorf("Write wrote %d bytes, more than the binary's %d", n, len(bin))
	}
	// The names may take twice the binary and 1 MiB (budget.Names).
	if limit := sound + 3*uint64(len(bin)); alloc > limit {
		t.Errorf("Write allocated %d bytes, more than %d (the sound binary's %d and 3 times its size)", alloc, limit, sound)
	}
}

// writeAllocs returns the bytes allocated by writing the binary bin as a
// Lidia file, which must succeed.
func writeAllocs(t *testing.T, bin []byte) uint64 {
	t.Helper()
	_, alloc, err := writeStats(bin)
	if err != nil {
		t.Fatal(err)
	}
	return alloc
}

// writeStats opens the binary bin and writes it as a Lidia file, and
// returns the bytes written and allocated.
func writeStats(bin []byte) (written int64, alloc uint64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var cw countWriter
	obj, err := object.NewBytes(bin)
	if err == nil {
		var tab *gosym.Table
		if tab, err = gosym.NewTable(obj); err == nil {
			err = Write(&cw, tab)
		}
	}
	runtime.ReadMemStats(&after)
	return cw.n, after.TotalAlloc - before.TotalAlloc, err
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
