package peobj

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.PE {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	f.Fuzz(backend.CheckNewBytes)
}

func TestMini(t *testing.T) {
	o := backend.OpenMini(t, objtest.WindowsAMD64)
	objtest.CheckSections(t, o.FromBytes, wantSections(o.Std))
	s := o.Std.Symbols[len(o.Std.Symbols)-1]
	if _, err := o.FromBytes.(object.SymbolLookup).LookupSymbol(s.Name); err != nil {
		t.Errorf("LookupSymbol(%q): %v", s.Name, err)
	}
}
