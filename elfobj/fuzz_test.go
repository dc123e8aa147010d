package elfobj

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func FuzzNewBytes(f *testing.F) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.Linux386, objtest.LinuxPPC64} {
		m := objtest.Mini(f, objtest.Binary(f, tg))
		fuzzseed.Add(f, m)
		fuzzseed.Add(f, objtest.StripSectionHeaders(f, m))
	}
	f.Fuzz(backend.CheckNewBytes)
}

func TestMini(t *testing.T) {
	o := backend.OpenMini(t, objtest.LinuxAMD64)
	syms, err := o.Std.Symbols()
	if err != nil || len(syms) == 0 {
		t.Fatalf("%d symbols, %v", len(syms), err)
	}
	s := syms[len(syms)-1]
	if got, err := o.FromBytes.(object.SymbolLookup).LookupSymbol(s.Name); err != nil || got.Addr != s.Value {
		t.Errorf("LookupSymbol(%q) = %+v, %v; want %#x", s.Name, got, err, s.Value)
	}
}
