package symbfile

import (
	"bytes"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/tabletest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// The helpers the export formats' tests share (internal/tabletest).
var (
	openTable  = tabletest.Open
	selfTable  = tabletest.Self
	functions  = tabletest.Functions
	sameFrames = tabletest.SameFrames
)

// entryTable opens a corpus binary.
func entryTable(tb testing.TB, e testcorpus.Entry) *gosym.Table {
	tb.Helper()
	tab, _ := tabletest.Entry(tb, e)
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
