package xcoffobj

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.XCOFF {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	fuzzseed.Add(f, xcoff32())
	f.Fuzz(func(t *testing.T, data []byte) {
		if obj, err := NewBytes(data); err == nil {
			objtest.CheckBytes(t, data, obj)
		}
	})
}

func TestMini(t *testing.T) {
	data := objtest.Mini(t, objtest.Binary(t, objtest.AIXPPC64))
	if len(data) > 16<<10 {
		t.Errorf("mini file of %d bytes", len(data))
	}
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	// The first symbols of a Go XCOFF file are the C_FILE and csect
	// entries of the first package; the mini file keeps 32 entries.
	hs, _ := obj.Sections()
	if objtest.FindSection(hs, ".text") < 0 {
		t.Errorf("sections %+v", hs)
	}
	if _, err := obj.(object.SymbolLookup).LookupSymbol("runtime.nosuchsymbol"); err == nil {
		t.Error("found a missing symbol")
	}
}
