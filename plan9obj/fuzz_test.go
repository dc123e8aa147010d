package plan9obj

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.Plan9 {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	f.Fuzz(backend.CheckNewBytes)
}

func TestMini(t *testing.T) {
	o := backend.OpenMini(t, objtest.Plan9AMD64)
	if s, err := o.FromBytes.(object.SymbolLookup).LookupSymbol("runtime.text"); err != nil || s.Addr == 0 {
		t.Errorf("LookupSymbol(runtime.text) = %+v, %v", s, err)
	}
}
