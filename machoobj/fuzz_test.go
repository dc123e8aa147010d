package machoobj

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range objtest.MachO {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	amd64 := objtest.Mini(f, objtest.Binary(f, objtest.DarwinAMD64))
	fuzzseed.Add(f, objtest.Fat(f, amd64, objtest.Mini(f, objtest.Binary(f, objtest.DarwinARM64))))
	fuzzseed.Add(f, synth(binary.BigEndian, false))
	fuzzseed.Add(f, synth(binary.LittleEndian, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		if obj, err := NewBytes(data); err == nil {
			objtest.CheckBytes(t, data, obj)
		}
		if files, err := NewFat(data); err == nil {
			for _, f := range files {
				// A section must lie within its architecture's slice.
				objtest.CheckBytesIn(t, data, f.base, f.base+uint64(len(f.data)), f)
			}
		}
	})
}

func TestMini(t *testing.T) {
	data := objtest.Mini(t, objtest.Binary(t, objtest.DarwinARM64))
	if len(data) > 16<<10 {
		t.Errorf("mini file of %d bytes", len(data))
	}
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	objtest.CheckBytes(t, data, obj)
	mf, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := obj.Sections()
	objtest.CompareSections(t, wantSections(mf, 0), want)
	s := mf.Symtab.Syms[len(mf.Symtab.Syms)-1]
	if got, err := obj.(*File).LookupSymbol(s.Name); err != nil || got.Addr != s.Value {
		t.Errorf("LookupSymbol(%q) = %+v, %v; want %#x", s.Name, got, err, s.Value)
	}
}
