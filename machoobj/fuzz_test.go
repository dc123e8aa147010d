package machoobj

import (
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
		backend.CheckNewBytes(t, data)
		if files, err := NewFat(data); err == nil {
			for _, f := range files {
				// A section must lie within its architecture's slice.
				objtest.CheckBytesIn(t, data, f.base, f.base+uint64(len(f.data)), f)
			}
		}
	})
}

func TestMini(t *testing.T) {
	o := backend.OpenMini(t, objtest.DarwinARM64)
	objtest.CheckSections(t, o.FromBytes, wantSections(o.Std, 0))
	s := o.Std.Symtab.Syms[len(o.Std.Symtab.Syms)-1]
	if got, err := o.FromBytes.(*File).LookupSymbol(s.Name); err != nil || got.Addr != s.Value {
		t.Errorf("LookupSymbol(%q) = %+v, %v; want %#x", s.Name, got, err, s.Value)
	}
}
