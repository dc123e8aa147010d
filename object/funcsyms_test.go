package object_test

import (
	"encoding/binary"
	"iter"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// symbolObject is an Object made of section headers and a symbol table.
type symbolObject struct {
	secs []object.SectionHeader
	syms []object.Symbol
	read *int // symbols yielded so far, if not nil
}

func (o symbolObject) Endian() binary.ByteOrder { return binary.LittleEndian }
func (o symbolObject) Sections() ([]object.SectionHeader, error) {
	return slices.Clone(o.secs), nil
}
func (o symbolObject) SectionData(int) ([]byte, error) { return nil, nil }
func (o symbolObject) Symbols() iter.Seq2[object.Symbol, error] {
	return func(yield func(object.Symbol, error) bool) {
		for _, s := range o.syms {
			if o.read != nil {
				*o.read++
			}
			if !yield(s, nil) {
				return
			}
		}
	}
}

// TestFuncSymbols checks FuncSymbols' rules: sorted by address, those
// with a size first at one address; a symbol without a size extends to the
// next function symbol at a higher address or the end of its section
// (sections that touch are not merged); symbols outside executable
// sections, without a name, or not functions are left out.
func TestFuncSymbols(t *testing.T) {
	code := object.SectionExec | object.SectionAlloc
	obj := symbolObject{
		secs: []object.SectionHeader{
			{Name: ".text", Addr: 0x1000, Size: 0x1000, Flags: code},
			{Name: ".plt", Addr: 0x2000, Size: 0x100, Flags: code},
			{Name: ".data", Addr: 0x3000, Size: 0x1000, Flags: object.SectionAlloc | object.SectionWrite},
			{Name: ".empty", Addr: 0x5000, Flags: code},
		},
		syms: []object.Symbol{
			{Name: "c", Addr: 0x1800, Func: true},
			{Name: "a.sizeless", Addr: 0x1000, Func: true},
			{Name: "a", Addr: 0x1000, Size: 0x10, Func: true},
			{Name: "a.alias", Addr: 0x1000, Func: true},
			{Name: "b", Addr: 0x1100, Size: 0x20, Func: true},
			{Name: "var", Addr: 0x1200},
			{Name: "", Addr: 0x1300, Func: true},
			{Name: "plt", Addr: 0x2010, Func: true},
			{Name: "data", Addr: 0x3000, Func: true},
			{Name: "empty", Addr: 0x5000, Func: true},
			{Name: "huge", Addr: 0x1900, Size: 1 << 40, Func: true},
		},
	}
	want := []object.FuncSymbol{
		{"a", 0x1000, 0x1010},
		{"a.sizeless", 0x1000, 0x1100},
		{"a.alias", 0x1000, 0x1100},
		{"b", 0x1100, 0x1120},
		{"c", 0x1800, 0x1900},
		{"plt", 0x2010, 0x2100},
	}
	if got := object.FuncSymbols(obj); !slices.Equal(got, want) {
		t.Errorf("FuncSymbols:\n got %v\nwant %v", got, want)
	}
}

// TestFuncSymbolsShared checks that symbols without a size sharing one
// address (a damaged table) cost FuncSymbols work in proportion to their
// number: the symbols are read once, and the result is right.
func TestFuncSymbolsShared(t *testing.T) {
	const n = 200_000
	obj := symbolObject{
		secs: []object.SectionHeader{{Addr: 0x1000, Size: 0x1000, Flags: object.SectionExec}},
		syms: make([]object.Symbol, n),
		read: new(int),
	}
	for i := range obj.syms {
		obj.syms[i] = object.Symbol{Name: "f", Addr: 0x1000, Func: true}
	}
	obj.syms[n-1].Addr = 0x1800
	got := object.FuncSymbols(obj)
	if *obj.read != n || len(got) != n {
		t.Fatalf("read %d symbols, returned %d; want %d", *obj.read, len(got), n)
	}
	if got[0] != (object.FuncSymbol{"f", 0x1000, 0x1800}) || got[n-1] != (object.FuncSymbol{"f", 0x1800, 0x2000}) {
		t.Errorf("got %v ... %v", got[0], got[n-1])
	}
}
