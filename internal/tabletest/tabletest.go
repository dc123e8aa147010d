// Package tabletest holds the test helpers that the export formats'
// packages (lidia, gsym, symbfile) share: opening the Table of a binary,
// of the test binary or of a corpus entry, listing its functions, and
// comparing the frames a reader gives with ResolveLocations'.
package tabletest

import (
	"os"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// Open opens the Table of the executable at path for the duration of the
// test.
func Open(tb testing.TB, path string) *gosym.Table {
	tb.Helper()
	tab, err := gosym.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tab.Close() })
	return tab
}

// Self opens the Table of the running test binary.
func Self(tb testing.TB) *gosym.Table {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Skip("no executable path:", err)
	}
	return Open(tb, exe)
}

// Entry opens a corpus binary, and returns its Table and bytes.
func Entry(tb testing.TB, e testcorpus.Entry) (*gosym.Table, []byte) {
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
	return tab, bin
}

// Functions returns the functions of tab with at least one PC.
func Functions(tb testing.TB, tab *gosym.Table) []gosym.Function {
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

// SameFrames reports whether got has want's functions, files and lines,
// and nothing else (the other fields of got are zero).
func SameFrames(got, want []gosym.Location) bool {
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
