package symbfile

import (
	"bytes"
	"os"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// selfTable opens the Table of the running test binary.
func selfTable(tb testing.TB) *gosym.Table {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Skip("no executable path:", err)
	}
	return openTable(tb, exe)
}

// openTable opens the Table of the executable at path for the duration of
// the test.
func openTable(tb testing.TB, path string) *gosym.Table {
	tb.Helper()
	tab, err := gosym.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tab.Close() })
	return tab
}

// entryTable opens a corpus binary.
func entryTable(tb testing.TB, e testcorpus.Entry) *gosym.Table {
	tb.Helper()
	bin, err := e.Binary()
	if err != nil {
		tb.Fatal(err)
	}
	obj, err := object.NewBytes(bin)
	if err != nil {
		tb.Fatal(err)
	}
	tab, err := gosym.NewTable(obj)
	if err != nil {
		tb.Fatalf("%s: NewTable: %v", e.Name, err)
	}
	return tab
}

// writeBytes writes tab as a symbfile in memory.
func writeBytes(tb testing.TB, tab *gosym.Table, opts ...Option) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tab, opts...); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// newReader reads data.
func newReader(tb testing.TB, data []byte) *Reader {
	tb.Helper()
	r, err := NewReader(data)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// functions returns the functions of tab with at least one PC.
func functions(tb testing.TB, tab *gosym.Table) []gosym.Function {
	tb.Helper()
	var fns []gosym.Function
	for f, err := range tab.Functions() {
		if err != nil {
			tb.Fatal(err)
		}
		if f.End() > f.Entry() {
			fns = append(fns, f)
		}
	}
	return fns
}

// sameFrames reports whether got has want's functions, files and lines.
func sameFrames(got, want []gosym.Location) bool {
	if len(got) != len(want) {
		return false
	}
	for i, l := range want {
		if got[i] != (gosym.Location{Function: l.Function, File: l.File, Line: l.Line}) {
			return false
		}
	}
	return true
}
