package wasmobj

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.Wasm {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	// Modules of both PC rules (TestSymbolPCRule).
	fuzzseed.Add(f, testModule(elementSection(0x41, 0x80, 0x20)))
	fuzzseed.Add(f, testModule(elementSection(0x41, 0x00)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if obj, err := NewBytes(data); err == nil {
			objtest.CheckBytes(t, data, obj)
		}
	})
}

func TestMini(t *testing.T) {
	data := objtest.Mini(t, objtest.Binary(t, objtest.JSWasm))
	if len(data) > 16<<10 {
		t.Errorf("mini file of %d bytes", len(data))
	}
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	hs, _ := obj.Sections()
	if hs[len(hs)-1].Name != "linear memory" {
		t.Errorf("sections %+v: no memory", hs)
	}
	// The first function is go:buildid, named "go_buildid" in the name
	// section (see the package documentation).
	if s, err := obj.(object.SymbolLookup).LookupSymbol("go_buildid"); err != nil || s.Addr != 0x1000<<16 {
		t.Errorf("LookupSymbol(go_buildid) = %+v, %v; want the first function", s, err)
	}
}
