package gosym

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// memObject is an Object held in memory, for tests that damage one section.
type memObject struct {
	order binary.ByteOrder
	hdrs  []object.SectionHeader
	data  [][]byte
}

func (m *memObject) Endian() binary.ByteOrder                  { return m.order }
func (m *memObject) Sections() ([]object.SectionHeader, error) { return m.hdrs, nil }
func (m *memObject) SectionData(i int) ([]byte, error)         { return m.data[i], nil }

// cloneObject copies the allocated sections of obj.
func cloneObject(t testing.TB, obj object.Object) *memObject {
	t.Helper()
	secs, err := obj.Sections()
	if err != nil {
		t.Fatal(err)
	}
	m := &memObject{order: obj.Endian()}
	for i, s := range secs {
		var d []byte
		if s.FileSize > 0 {
			if d, err = obj.SectionData(i); err != nil {
				t.Fatal(err)
			}
		}
		m.hdrs = append(m.hdrs, s)
		m.data = append(m.data, append([]byte(nil), d...))
	}
	return m
}

func (m *memObject) section(name string) int {
	for i, s := range m.hdrs {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// exercise runs every lookup over tab and checks that each error is one
// the API promises.
func exercise(t testing.TB, tab *Table, pcs []uint64) {
	t.Helper()
	check := func(err error) {
		if err != nil && !errors.Is(err, ErrCorrupted) && !errors.Is(err, ErrPCNotFound) {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	var locs []Location
	var inl []InlineFunction
	var lr LinesResult
	for _, pc := range pcs {
		var err error
		locs, err = tab.ResolveLocations(pc, locs)
		check(err)
		f, err := tab.ResolveFunction(pc)
		check(err)
		if err != nil {
			continue
		}
		_, _, _, _ = f.Name(), f.File(), f.StartLine(), f.Wrapper()
		inl, err = f.InlineFunctions(inl)
		check(err)
		lr, err = f.Lines(lr)
		check(err)
	}
	n := 0
	for _, err := range tab.Functions() {
		check(err)
		if n++; n > 200 {
			break
		}
	}
}

// TestCorruptPclntab truncates and damages the pclntab of this test binary
// and checks that nothing panics and every error wraps ErrCorrupted.
func TestCorruptPclntab(t *testing.T) {
	m := cloneObject(t, selfObject(t))
	i := m.section(".gopclntab")
	if i < 0 {
		t.Skip("no .gopclntab")
	}
	orig := m.data[i]
	tab, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	pcs := samplePCs(t, tab, 300)

	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		d := append([]byte(nil), orig...)
		switch trial % 3 {
		case 0: // truncate
			d = d[:r.IntN(len(d))]
		case 1: // damage a few bytes of the header and early tables
			for range 4 {
				d[r.IntN(min(len(d), 4096))] = byte(r.Uint32())
			}
		case 2: // damage bytes anywhere
			for range 64 {
				d[r.IntN(len(d))] = byte(r.Uint32())
			}
		}
		m.data[i] = d
		m.hdrs[i].Size, m.hdrs[i].FileSize = uint64(len(d)), uint64(len(d))
		tab, err := NewTable(m)
		if err != nil {
			if !errors.Is(err, ErrCorrupted) && !errors.Is(err, ErrNoTable) {
				t.Fatalf("trial %d: NewTable: %v", trial, err)
			}
			continue
		}
		exercise(t, tab, pcs)
	}
}
