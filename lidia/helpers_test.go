package lidia

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

// writeBytes writes tab as a Lidia file in memory.
func writeBytes(tb testing.TB, tab *gosym.Table, opts ...Option) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tab, opts...); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// newReader opens data, verifying the checksums.
func newReader(tb testing.TB, data []byte, opts ...Option) *Reader {
	tb.Helper()
	r, err := NewReader(data, append([]Option{WithCRC()}, opts...)...)
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

// rec returns range entry i.
func (r *Reader) rec(i int) []byte {
	w := numFields * r.fW
	return r.rng[i*w : i*w+w]
}

// field returns field k of a range entry.
func (r *Reader) field(rec []byte, k int) uint64 {
	if r.fW == 4 {
		return uint64(le.Uint32(rec[4*k:]))
	}
	return le.Uint64(rec[8*k:])
}
