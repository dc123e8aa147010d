package objtest

import (
	"bytes"
	"io"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// A Backend is what the shared tests need to know of an object backend
// whose files the standard library reads as F (*elf.File, *macho.File,
// *pe.File or *plan9obj.File).
type Backend[F any] struct {
	Parse    func(io.ReaderAt) (F, error)        // the standard library's NewFile
	NewBytes func([]byte) (object.Object, error) // the backend's NewBytes
	New      func(F) object.Object               // the backend's New
}

// Opened is one file read the three ways a Backend can read it.
type Opened[F any] struct {
	Data      []byte        // the file's bytes
	Std       F             // read by the standard library
	FromBytes object.Object // read by the backend's NewBytes
	FromFile  object.Object // Std adapted by the backend's New
}

// Objects returns the two objects the backend made, FromBytes first.
func (o *Opened[F]) Objects() []object.Object {
	return []object.Object{o.FromBytes, o.FromFile}
}

// Open reads data with the standard library and with the backend's NewBytes,
// failing the test if either fails, and adapts the standard library's file
// with the backend's New.
func (b *Backend[F]) Open(tb testing.TB, data []byte) *Opened[F] {
	tb.Helper()
	std, err := b.Parse(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	return &Opened[F]{Data: data, Std: std, FromBytes: b.MustNewBytes(tb, data), FromFile: b.New(std)}
}

// MustNewBytes returns the object the backend's NewBytes makes of data,
// failing the test if it returns an error.
func (b *Backend[F]) MustNewBytes(tb testing.TB, data []byte) object.Object {
	tb.Helper()
	obj, err := b.NewBytes(data)
	if err != nil {
		tb.Fatal(err)
	}
	return obj
}

// Run is like the package's Run, but test gets the program opened by Open.
func (b *Backend[F]) Run(t *testing.T, targets []Target, test func(t *testing.T, tg Target, o *Opened[F])) {
	Run(t, targets, func(t *testing.T, tg Target, data []byte) {
		test(t, tg, b.Open(t, data))
	})
}

// RunSymbols runs a parallel subtest for each target that checks, with
// CompareSymbols, that both objects find the symbols want reads from the
// standard library's file: its defined symbols, in table order, of which
// LookupSymbol finds the first of each name. The test program defines
// many more than 100; fewer fail the test.
func (b *Backend[F]) RunSymbols(t *testing.T, targets []Target, want func(t *testing.T, std F) []object.Symbol) {
	b.Run(t, targets, func(t *testing.T, _ Target, o *Opened[F]) {
		w := FirstByName(want(t, o.Std))
		if len(w) < 100 {
			t.Fatalf("only %d symbols", len(w))
		}
		CompareSymbols(t, w, o.Objects()...)
	})
}

// OpenMini opens the Mini file of the test program built for tg, after
// checking that it is at most 16 KiB and that the object NewBytes makes of
// it keeps the invariants of CheckBytes.
func (b *Backend[F]) OpenMini(t *testing.T, tg Target) *Opened[F] {
	t.Helper()
	data := Mini(t, Binary(t, tg))
	if len(data) > 16<<10 {
		t.Errorf("mini file of %d bytes", len(data))
	}
	o := b.Open(t, data)
	CheckBytes(t, data, o.FromBytes)
	return o
}

// CheckNewBytes checks the backend's NewBytes on data, which may be any
// bytes at all: it must return an error or an object that keeps the
// invariants of CheckBytes. Fuzz targets call it.
func (b *Backend[F]) CheckNewBytes(t *testing.T, data []byte) {
	t.Helper()
	if obj, err := b.NewBytes(data); err == nil {
		CheckBytes(t, data, obj)
	}
}
