package objtest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
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
// nil. Errors are logged, and must be *object.FormatError values. Open may allocate at most OpenAllocLimit bytes,
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
				var fe *object.FormatError
				if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), fe.Format+"obj: ") {
					t.Errorf("NewBytes: %v (%T), want an *object.FormatError", err, err)
				}
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

// CheckNamesBounded damages the names of the symbol table of data, a file
// the backend's open reads, as round 3's r03 reproducers did: names holds
// their bytes, data[off:off+size] (a string table, or a symbol table that
// holds its names). It makes two files: one whose names are NUL-free but
// for the last byte, so that every name runs to the end of the table, and
// one without a NUL at all. open must read each, and its Symbols, 20
// lookups and FuncSymbols must each allocate at most 6 bytes for each byte
// of the table (one copy of it, and the index of its NULs), plus 1 for
// each 4 bytes of the file (the symbols, and the map of the lookups), plus
// OpenAllocLimit: not a copy of the table for each name. It returns the
// number of symbols Symbols yields from each file.
func CheckNamesBounded(t *testing.T, data []byte, off, size uint64, open func([]byte) (object.Object, error)) (counts [2]int) {
	t.Helper()
	if off > uint64(len(data)) || size > uint64(len(data))-off || size < 2 {
		t.Fatalf("names at %#x size %#x in a file of %#x bytes", off, size, len(data))
	}
	limit := 6*size + uint64(len(data))/4 + OpenAllocLimit
	for i, last := range []byte{0, 'x'} {
		b := bytes.Clone(data)
		names := b[off : off+size]
		for j, c := range names {
			if c == 0 {
				names[j] = 'x'
			}
		}
		names[len(names)-1] = last
		obj, err := open(b)
		if err != nil {
			t.Fatalf("last byte %q: %v", last, err)
		}
		var symErr error
		n := alloctest.Bytes(func() {
			for _, err := range obj.(object.SymbolIterator).Symbols() {
				if err != nil {
					symErr = err
					break
				}
				counts[i]++
			}
		})
		if n > limit {
			t.Errorf("last byte %q: Symbols allocated %d bytes, want at most %d for %d bytes of names", last, n, limit, size)
		}
		t.Logf("last byte %q: Symbols allocated %d bytes for %d symbols (%v), names of %d bytes", last, n, counts[i], symErr, size)
		n = alloctest.Bytes(func() {
			for j := range 20 {
				obj.(object.SymbolLookup).LookupSymbol(fmt.Sprint("main.f", j))
			}
		})
		if n > limit {
			t.Errorf("last byte %q: 20 lookups allocated %d bytes, want at most %d", last, n, limit)
		}
		n = alloctest.Bytes(func() { object.FuncSymbols(obj) })
		if n > limit {
			t.Errorf("last byte %q: FuncSymbols allocated %d bytes, want at most %d", last, n, limit)
		}
	}
	return counts
}
