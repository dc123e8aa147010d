package peobj

import (
	"bytes"
	"debug/pe"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.PE {
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
	data := objtest.Mini(t, objtest.Binary(t, objtest.WindowsAMD64))
	if len(data) > 16<<10 {
		t.Errorf("mini file of %d bytes", len(data))
	}
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	pf, err := pe.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := obj.Sections()
	objtest.CompareSections(t, got, wantSections(pf))
	s := pf.Symbols[len(pf.Symbols)-1]
	if _, err := obj.(*File).LookupSymbol(s.Name); err != nil {
		t.Errorf("LookupSymbol(%q): %v", s.Name, err)
	}
}
