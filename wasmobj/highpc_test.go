package wasmobj

import (
	"encoding/binary"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// TestSymbolPCRule checks the PC that LookupSymbol gives a function, which
// follows the Go linker's rule told by the element section (FORMAT.md,
// "WebAssembly"): a segment at table index 0x1000 (Go 1.11–1.27) gives
// (0x1000 + i)<<16, one at 0 (Go 1.28) gives 1<<63 | i<<16, and anything
// else the older rule. The modules are built here: one imported function,
// two defined ones, named by the name section.
func TestSymbolPCRule(t *testing.T) {
	for _, c := range []struct {
		name    string
		element []byte // the element section's payload; nil: none
		first   uint64 // the PC of the first defined function
	}{
		{"go1.27", elementSection(0x41, 0x80, 0x20), 0x1000 << 16},
		{"go1.28", elementSection(0x41, 0x00), 1 << 63},
		{"no element section", nil, 0x1000 << 16},
		{"offset 5", elementSection(0x41, 0x05), 0x1000 << 16},
		{"global.get offset", elementSection(0x23, 0x00), 0x1000 << 16},
		{"passive segment", []byte{1, 1, 0, 2, 1, 2}, 0x1000 << 16},
		{"truncated", []byte{1, 0, 0x41}, 0x1000 << 16},
		{"no segment", []byte{0}, 0x1000 << 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj, err := NewBytes(testModule(c.element))
			if err != nil {
				t.Fatal(err)
			}
			l := obj.(object.SymbolLookup)
			for i, name := range []string{"main.first", "main.second"} {
				s, err := l.LookupSymbol(name)
				if want := c.first + uint64(i)<<16; err != nil || s.Addr != want {
					t.Errorf("LookupSymbol(%q) = %#x, %v; want %#x", name, s.Addr, err, want)
				}
			}
		})
	}
}

// elementSection returns the payload of an element section with one
// active segment for table 0 at the offset of the constant expression
// expr (without its end), holding the functions 1 and 2.
func elementSection(expr ...byte) []byte {
	b := []byte{1, 0}
	b = append(b, expr...)
	return append(b, 0x0b, 2, 1, 2)
}

// testModule returns a module that imports one function and defines two,
// main.first and main.second (function indexes 1 and 2), with the element
// section payload element (if not nil).
func testModule(element []byte) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	sec := func(id byte, payload []byte) {
		m = append(m, id)
		m = binary.AppendUvarint(m, uint64(len(payload)))
		m = append(m, payload...)
	}
	sec(1, []byte{1, 0x60, 0, 0})           // type: () -> ()
	sec(2, []byte{1, 1, 'g', 1, 'f', 0, 0}) // import g.f, type 0
	sec(3, []byte{2, 0, 0})                 // two functions of type 0
	sec(4, []byte{1, 0x70, 0, 3})           // a table
	if element != nil {
		sec(9, element)
	}
	sec(10, []byte{2, 2, 0, 0x0b, 2, 0, 0x0b}) // two empty bodies
	names := []byte{1}                         // subsection 1: function names
	var sub []byte
	sub = append(sub, 2)
	for i, n := range []string{"main.first", "main.second"} {
		sub = append(sub, byte(i+1), byte(len(n)))
		sub = append(sub, n...)
	}
	names = binary.AppendUvarint(names, uint64(len(sub)))
	names = append(names, sub...)
	sec(0, append([]byte("\x04name"), names...))
	return m
}
