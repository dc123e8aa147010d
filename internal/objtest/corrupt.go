package objtest

import (
	"bytes"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/object"
)

// Patcher returns a function that returns a copy of data changed by f:
// tests use it to damage a file.
func Patcher(data []byte) func(f func(b []byte)) []byte {
	return func(f func(b []byte)) []byte {
		b := bytes.Clone(data)
		f(b)
		return b
	}
}

// A Corrupt is a damaged file for RunCorrupt.
type Corrupt struct {
	Name     string
	Data     []byte
	WantOpen bool // whether the backend must still open it
}

// OpenAllocLimit bounds the heap bytes a backend may allocate to open a
// file, whatever counts its headers claim: opening decodes only the
// headers, and keeps the sections as slices of the file.
const OpenAllocLimit = 64 << 10

// RunCorrupt runs a subtest for each damaged file: open (the backend's
// NewBytes, say) must return an error, or where WantOpen an object that
// keeps the invariants of CheckBytes and passes check, unless check is
// nil. Errors are logged. Open may allocate at most OpenAllocLimit bytes,
// and looking up a symbol (which reads the symbol table) at most 16 bytes
// for each byte of the file beyond that: no allocation is sized by a count
// the file claims.
func RunCorrupt(t *testing.T, files []Corrupt, open func([]byte) (object.Object, error), check func(*testing.T, object.Object)) {
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			var obj object.Object
			var err error
			if n := alloctest.Bytes(func() { obj, err = open(f.Data) }); n > OpenAllocLimit {
				t.Errorf("opening allocated %d bytes", n)
			}
			switch {
			case err == nil && !f.WantOpen:
				t.Fatal("NewBytes succeeded, want an error")
			case err != nil && f.WantOpen:
				t.Fatalf("NewBytes: %v", err)
			case err != nil:
				t.Log(err)
				return
			}
			CheckBytes(t, f.Data, obj)
			if check != nil {
				check(t, obj)
			}
			n := alloctest.Bytes(func() {
				_, err = obj.(object.SymbolLookup).LookupSymbol("runtime.text")
			})
			if limit := 16*uint64(len(f.Data)) + OpenAllocLimit; n > limit {
				t.Errorf("LookupSymbol allocated %d bytes for a file of %d", n, len(f.Data))
			}
			t.Log(err)
		})
	}
}
