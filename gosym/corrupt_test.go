package gosym

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/objtest"

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
		var fe *FormatError
		if errors.Is(err, ErrCorrupted) && !errors.As(err, &fe) {
			t.Fatalf("corrupt-table error %q is not a *FormatError", err)
		}
	}
	var locs []Location
	var inl []InlineFunction
	var lr []FunctionLine
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

// lookupPass resolves every PC of every function of tab (stopping at the
// first function-table error, as a caller would; and at 16 KiB into a
// function, whose end a damaged table may put gigabytes away), with Lines,
// InlinedCalls and InlineFunctions once per function, and returns how many
// lookups failed. Its buffers are reused, as a caller's would be.
func lookupPass(tab *Table) (lookups, failed int) {
	var locs []Location
	var lines []FunctionLine
	var calls []InlinedCall
	var inl []InlineFunction
	for f, err := range tab.Functions() {
		if err != nil {
			break
		}
		for pc := f.Entry(); pc < min(f.End(), f.Entry()+1<<14); pc++ {
			lookups++
			if locs, err = tab.ResolveLocations(pc, locs); err != nil {
				failed++
			}
		}
		lines, _ = f.Lines(lines)
		calls, _ = f.InlinedCalls(calls)
		inl, _ = f.InlineFunctions(inl)
	}
	return lookups, failed
}

// TestDamagedTableAllocation flips bits in the pclntab header, the file
// table and the function records of a real binary of each layout, and
// checks that a pass of lookups over every PC allocates at most four
// times the size of the binary, however many lookups fail: an error costs
// O(1), and nothing is formatted again and again. (A damaged hello-world
// binary of 2.3 MB once made such a pass allocate 23 MB, mostly error
// messages formatted inside the decoding loops.)
func TestDamagedTableAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector, so pooled scratch memory is allocated again")
	}
	loadFuzzBases(t)
	trials := 4
	damagedTrials, failedLookups, maxRatio := 0, 0, 0.0
	for bi, base := range fuzzBases.objs {
		size := uint64(0)
		for _, d := range base.data {
			size += uint64(len(d))
		}
		sec := base.section(".gopclntab")
		if sec < 0 {
			t.Fatalf("base %s: no .gopclntab", fuzzBaseNames[bi])
		}
		tab, err := NewTable(base)
		if err != nil {
			t.Fatal(err)
		}
		// Where the header, the file table and the function records
		// are (the records follow the functab).
		var regions [][2]int
		at := func(b []byte, n int) {
			if off, ok := offsetIn(base.data[sec], b); ok && len(b) > 0 {
				end := min(int(off)+min(n, len(b)), len(base.data[sec]))
				regions = append(regions, [2]int{int(off), end})
			}
		}
		if tab.hdr.magic != magic12 {
			// The low bytes of the header's table offsets: a table
			// moved by a few bytes reads as garbage that still parses.
			p := tab.hdr.rd.ptrSize
			for w := 2; w < 8; w++ {
				at(base.data[sec][8+w*p:], 2)
			}
		}
		at(tab.hdr.filetab, 4096)
		if recs := tab.hdr.funcs[len(tab.hdr.functab):]; tab.hdr.magic != magic12 {
			at(recs, 1<<18)
		} else {
			at(tab.hdr.functab[len(tab.hdr.functab):cap(tab.hdr.functab)], 1<<18)
		}
		r := rand.New(rand.NewPCG(uint64(bi), 12))
		for trial := range trials {
			d := slices.Clone(base.data[sec])
			for range 1 + trial%4 {
				reg := regions[r.IntN(len(regions))]
				i := reg[0] + r.IntN(reg[1]-reg[0])
				d[i] ^= 1 << r.IntN(8)
			}
			m := damaged(base, sec, 0, nil, 0)
			m.data[sec] = d
			bad, err := NewTable(m)
			if err != nil {
				continue
			}
			var lookups, failed int
			n := alloctest.Bytes(func() { lookups, failed = lookupPass(bad) })
			damagedTrials++
			failedLookups += failed
			maxRatio = max(maxRatio, float64(n)/float64(size))
			if n > 4*size {
				t.Errorf("%s, trial %d: a pass of %d lookups (%d failed) allocated %d bytes, more than 4 × %d", fuzzBaseNames[bi], trial, lookups, failed, n, size)
			}
		}
	}
	t.Logf("%d damaged tables opened, %d failed lookups in all; the most a pass allocated: %.2f × the binary", damagedTrials, failedLookups, maxRatio)
	if failedLookups == 0 {
		t.Error("no lookup failed: the damage tested nothing")
	}
}

// TestSharedDamagedCases runs the lookup pass over the damaged binaries
// of the issue that reported the allocation churn
// (../shared/cases/corrupt-header-*.bin.gz beside the repository), when
// they are there: at most four times the input.
func TestSharedDamagedCases(t *testing.T) {
	objtest.SkipUnlessHeavy(t) // TestDamagedTableAllocation covers the same damage in go test ./...
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector, so pooled scratch memory is allocated again")
	}
	paths, _ := filepath.Glob("../../shared/cases/corrupt-header-*.bin.gz")
	if len(paths) == 0 {
		t.Skip("../shared/cases is not beside the repository (TestDamagedTableAllocation covers the same damage)")
	}
	for _, p := range paths {
		bin := gunzipFile(t, p)
		obj, err := object.NewBytes(bin)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := NewTable(obj)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var lookups, failed int
		n := alloctest.Bytes(func() { lookups, failed = lookupPass(tab) })
		t.Logf("%s: %d lookups, %d failed, %d bytes allocated (%.2f × the input)", filepath.Base(p), lookups, failed, n, float64(n)/float64(len(bin)))
		if n > 4*uint64(len(bin)) || failed == 0 {
			t.Errorf("%s: a pass of %d lookups (%d failed) allocated %d bytes, more than 4 × %d", p, lookups, failed, n, len(bin))
		}
	}
}

func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
