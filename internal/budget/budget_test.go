package budget

import (
	"math"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// sections is an Object with the given section headers only.
type sections struct {
	object.Object
	hs []object.SectionHeader
}

func (s sections) Sections() ([]object.SectionHeader, error) { return s.hs, nil }

func TestNames(t *testing.T) {
	for _, c := range []struct {
		name string
		hs   []object.SectionHeader
		want uint64
	}{
		{"no sections", nil, 1 << 20},
		{"the furthest end counts", []object.SectionHeader{{Offset: 0x1000, FileSize: 0x500}, {Offset: 0x200, FileSize: 0x100}}, 2*0x1500 + 1<<20},
		{"bss counts for nothing", []object.SectionHeader{{Offset: 0x3000, FileSize: 0}, {Offset: 0x100, FileSize: 0x100}}, 2*0x3000 + 1<<20},
		{"an end that overflows is ignored", []object.SectionHeader{{Offset: math.MaxUint64 - 1, FileSize: 10}, {Offset: 0, FileSize: 0x10}}, 2*0x10 + 1<<20},
		{"at most 4 GiB", []object.SectionHeader{{Offset: 1 << 40, FileSize: 1}}, 2*math.MaxUint32 + 1<<20},
	} {
		if got := Names(sections{hs: c.hs}); got != c.want {
			t.Errorf("%s: Names = %d, want %d", c.name, got, c.want)
		}
	}
}
