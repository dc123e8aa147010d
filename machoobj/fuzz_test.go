package machoobj

import (
	"encoding/binary"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
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
			for i, f := range files {
				// A section must lie within its architecture's slice.
				off, size := fatArch(data, i)
				objtest.CheckBytesIn(t, data, off, off+size, f)
			}
		}
	})
}

func TestMini(t *testing.T) {
	o := backend.OpenMini(t, objtest.DarwinARM64)
	objtest.CheckSections(t, o.FromBytes, wantSections(o.Std, 0))
	s := o.Std.Symtab.Syms[len(o.Std.Symtab.Syms)-1]
	if got, err := o.FromBytes.(object.SymbolLookup).LookupSymbol(s.Name); err != nil || got.Addr != s.Value {
		t.Errorf("LookupSymbol(%q) = %+v, %v; want %#x", s.Name, got, err, s.Value)
	}
}

// fatArch returns the offset and size of architecture i of the universal
// file in data, which NewFat accepted.
func fatArch(data []byte, i int) (off, size uint64) {
	be := binary.BigEndian
	if be.Uint32(data) == 0xcafebabf { // 64-bit table: 32-byte entries
		e := data[8+32*i:]
		return be.Uint64(e[8:]), be.Uint64(e[16:])
	}
	e := data[8+20*i:]
	return uint64(be.Uint32(e[8:])), uint64(be.Uint32(e[12:]))
}
