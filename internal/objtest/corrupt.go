package objtest

import (
	"bytes"
	"testing"

	"github.com/gosym-dev/gosym/internal/objfile"
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

// RunCorrupt runs a subtest for each damaged file: open (the backend's
// NewBytes, say) must return an error, or where WantOpen an object that
// keeps the invariants of CheckBytes and passes check, unless check is
// nil. Errors are logged.
func RunCorrupt(t *testing.T, files []Corrupt, open func([]byte) (objfile.Object, error), check func(*testing.T, objfile.Object)) {
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			obj, err := open(f.Data)
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
			_, err = obj.(objfile.SymbolLookup).LookupSymbol("runtime.text")
			t.Log(err)
		})
	}
}
