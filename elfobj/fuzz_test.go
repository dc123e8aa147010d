package elfobj

import (
	"bytes"
	"debug/elf"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.Linux386, objtest.LinuxPPC64} {
		m := objtest.Mini(f, objtest.Binary(f, tg))
		fuzzseed.Add(f, m)
		fuzzseed.Add(f, objtest.StripSectionHeaders(f, m))
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
	data := objtest.Mini(t, objtest.Binary(t, objtest.LinuxAMD64))
	if len(data) > 16<<10 {
		t.Errorf("mini file of %d bytes", len(data))
	}
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	if err != nil || len(syms) == 0 {
		t.Fatalf("%d symbols, %v", len(syms), err)
	}
	s := syms[len(syms)-1]
	if got, err := obj.(*File).LookupSymbol(s.Name); err != nil || got.Addr != s.Value {
		t.Errorf("LookupSymbol(%q) = %+v, %v; want %#x", s.Name, got, err, s.Value)
	}
}
