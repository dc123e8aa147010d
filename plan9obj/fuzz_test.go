package plan9obj

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.Plan9 {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := NewBytes(data)
		if err != nil {
			return
		}
		objtest.CheckBytes(t, data, obj)
	})
}

func TestMini(t *testing.T) {
	data := objtest.Mini(t, objtest.Binary(t, objtest.Plan9AMD64))
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	if s, err := obj.(*File).LookupSymbol("runtime.text"); err != nil || s.Addr == 0 {
		t.Errorf("LookupSymbol(runtime.text) = %+v, %v", s, err)
	}
}
