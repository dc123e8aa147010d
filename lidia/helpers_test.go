package lidia

import (
	"bytes"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/tabletest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// The helpers the export formats' tests share (internal/tabletest).
var (
	openTable = tabletest.Open
	selfTable = tabletest.Self
	functions = tabletest.Functions
)

// entryTable opens a corpus binary.
func entryTable(tb testing.TB, e testcorpus.Entry) *gosym.Table {
	tb.Helper()
	tab, _ := tabletest.Entry(tb, e)
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
