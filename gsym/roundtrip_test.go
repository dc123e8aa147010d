package gsym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/corpussample"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// roundTrip checks, at every PC of every function of tab, the file data
// written for it: Lookup must return ResolveLocations' frames (functions,
// files, lines); addresses outside the functions must give an error
// wrapping gosym.ErrPCNotFound. It returns the number of PCs and frames
// checked.
func roundTrip(t *testing.T, tab *gosym.Table, data []byte) (pcs, frames int) {
	t.Helper()
	r := newReader(t, data)
	var want, got []gosym.Location
	var err error
	bad := 0
	fns := functions(t, tab)
	if r.NumAddresses() != len(fns) {
		t.Errorf("%d FunctionInfos for %d functions", r.NumAddresses(), len(fns))
	}
	for _, f := range fns {
		for pc := f.Entry(); pc < f.End(); pc++ {
			if want, err = f.ResolveLocations(pc, want); err != nil {
				t.Fatalf("%s pc %#x: %v", f.Name(), pc, err)
			}
			if got, err = r.Lookup(pc, got); err != nil {
				t.Fatalf("pc %#x: Lookup: %v", pc, err)
			}
			pcs++
			frames += len(want)
			if !sameFrames(got, want) {
				if bad++; bad <= 10 {
					t.Errorf("pc %#x:\n got  %v\n want %v", pc, got, want)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d PCs disagree", bad, pcs)
	}
	for _, pc := range []uint64{0, fns[0].Entry() - 1, fns[len(fns)-1].End(), ^uint64(0)} {
		if got, err := r.Lookup(pc, got); !errors.Is(err, gosym.ErrPCNotFound) || len(got) != 0 {
			t.Errorf("Lookup(%#x) outside the functions = %v, %v; want ErrPCNotFound", pc, got, err)
		}
	}
	return pcs, frames
}

func TestRoundTripSelf(t *testing.T) {
	tab := selfTable(t)
	data := writeBytes(t, tab)
	pcs, frames := roundTrip(t, tab, data)
	t.Logf("test binary: %d PCs, %d frames agree (file of %d bytes)", pcs, frames, len(data))
}

// TestRoundTripToolchain checks the go binary of the installed toolchain
// at every PC (6.9 million with go1.26.8).
func TestRoundTripToolchain(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	tab := openTable(t, toolBinary(t, "go"))
	pcs, frames := roundTrip(t, tab, writeBytes(t, tab))
	t.Logf("go: %d PCs, %d frames agree", pcs, frames)
}

// TestRoundTripCorpus checks every corpus binary at every PC: every
// release, format and architecture of the corpus (with GOSYM_CORPUS_DIR,
// a sample of the full matrix that covers every release, target and
// variant: corpussample), stripped or not, in the binary's byte order.
func TestRoundTripCorpus(t *testing.T) {
	entries := corpussample.Test(t)
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			tab, _ := entryTable(t, e)
			data := writeBytes(t, tab)
			if o := order(data); o != tab.Object().Endian() {
				t.Errorf("file in %v, binary in %v", o, tab.Object().Endian())
			}
			pcs, frames := roundTrip(t, tab, data)
			t.Logf("%s: %d PCs, %d frames agree (file of %d bytes)", e.Name, pcs, frames, len(data))
		})
	}
}

// TestDeterministic writes the test binary twice, from two Tables: the
// bytes must be the same.
func TestDeterministic(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	a := writeBytes(t, openTable(t, exe))
	b := writeBytes(t, openTable(t, exe))
	if !bytes.Equal(a, b) {
		t.Fatalf("two writes of the same binary differ (%d and %d bytes)", len(a), len(b))
	}
}

// TestHeader checks the header Write makes for the test binary: base
// address the first entry, addresses sorted, the GNU build ID as UUID.
func TestHeader(t *testing.T) {
	tab := selfTable(t)
	data := writeBytes(t, tab)
	r := newReader(t, data)
	fns := functions(t, tab)
	if r.base != fns[0].Entry() {
		t.Errorf("base address %#x, first entry %#x", r.base, fns[0].Entry())
	}
	for i, f := range fns {
		if a := r.addr(i); a != f.Entry() {
			t.Fatalf("address %d = %#x, want %s's entry %#x", i, a, f.Name(), f.Entry())
		}
	}
	if r.o != tab.Object().Endian() {
		t.Errorf("byte order %v, binary's %v", r.o, tab.Object().Endian())
	}
	t.Logf("UUID %x, %d-byte address offsets, %d files", r.UUID(), r.addrSize, r.nfiles)
}

// TestSmallFile looks up addresses in a synthetic file, in both byte
// orders: line rows in three files, an inline tree two deep, a function
// without line table, and addresses around them.
func TestSmallFile(t *testing.T) {
	type loc = gosym.Location
	tests := []struct {
		addr uint64
		want []loc
	}{
		{0x1000, []loc{{Function: "f", File: "dir/f.go", Line: 10}}},
		{0x100f, []loc{{Function: "f", File: "dir/f.go", Line: 10}}},
		{0x1012, []loc{{Function: "g", File: "dir/g.go", Line: 20}, {Function: "f", File: "dir/f.go", Line: 11}}},
		{0x1020, []loc{{Function: "h", File: "h.go", Line: 30}, {Function: "g", File: "dir/g.go", Line: 21}, {Function: "f", File: "dir/f.go", Line: 11}}},
		{0x1027, []loc{{Function: "h", File: "h.go", Line: 30}, {Function: "g", File: "dir/g.go", Line: 21}, {Function: "f", File: "dir/f.go", Line: 11}}},
		{0x1028, []loc{{Function: "f", File: "dir/f.go", Line: 12}}},
		{0x103f, []loc{{Function: "f", File: "dir/f.go", Line: 12}}},
		{0x1040, []loc{{Function: "k"}}},
		{0x104f, []loc{{Function: "k"}}},
		{0x1050, nil},
		{0xfff, nil},
		{0, nil},
	}
	for _, o := range []endian{binary.LittleEndian, binary.BigEndian} {
		r := newReader(t, smallFile(o))
		for _, tt := range tests {
			got, err := r.Lookup(tt.addr, nil)
			if tt.want == nil {
				if !errors.Is(err, gosym.ErrPCNotFound) {
					t.Errorf("%v: Lookup(%#x) = %v, %v; want ErrPCNotFound", o, tt.addr, got, err)
				}
				continue
			}
			if err != nil || !sameFrames(got, tt.want) {
				t.Errorf("%v: Lookup(%#x) = %v, %v; want %v", o, tt.addr, got, err, tt.want)
			}
		}
	}
}

// TestLookupAllocs checks that Lookup allocates nothing once warm, at the
// sampled PCs of the test binary.
func TestLookupAllocs(t *testing.T) {
	tab := selfTable(t)
	r := newReader(t, writeBytes(t, tab))
	pcs := samplePCs(functions(t, tab), 2000)
	buf := make([]gosym.Location, 0, 64)
	for _, pc := range pcs {
		buf, _ = r.Lookup(pc, buf)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, pc := range pcs {
			buf, _ = r.Lookup(pc, buf)
		}
	})
	if allocs != 0 {
		t.Errorf("Lookup at %d PCs: %v allocations, want 0", len(pcs), allocs)
	}
}

// TestClose checks Lookup after Close and that strings outlive the
// Reader's data.
func TestClose(t *testing.T) {
	data := smallFile(binary.LittleEndian)
	r, err := NewReader(bytes.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Lookup(0x1020, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Lookup(0x1020, nil); !errors.Is(err, ErrClosed) || !errors.Is(err, os.ErrClosed) {
		t.Errorf("Lookup after Close: %v, want ErrClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if got[0].Function != "h" || got[0].File != "h.go" {
		t.Errorf("frames after Close: %v", got)
	}
}

// TestOpen reads a file written to disk and refuses a directory.
func TestOpen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "small.gsym")
	if err := os.WriteFile(name, smallFile(binary.BigEndian), 0o666); err != nil {
		t.Fatal(err)
	}
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Lookup(0x1012, nil); err != nil || len(got) != 2 {
		t.Errorf("Lookup = %v, %v", got, err)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("Open of a directory succeeded")
	}
}

// TestIndexMatchesInPlace checks that the index made on a function's
// first lookup answers as the reading in place does, at every address of
// synthetic functions whose trees take each path: children sorted and
// disjoint, children that overlap (scanned in order: the first covering
// one wins), a child that covers nothing, call file 0 (no frame), rows
// that go backward (no index).
func TestIndexMatchesInPlace(t *testing.T) {
	lines := enc(int64(0), int64(2), 5, byte(opFirstSpec), byte(opSetFile), 2, byte(opFirstSpec+1+3*0x10), byte(opEnd))
	backward := enc(int64(0), int64(0), 5, byte(opAdvancePC), 8, byte(opAdvancePC), uint64(0xffffffffffffff00), byte(opEnd))
	var o endian = binary.LittleEndian
	u32 := func(v uint32) []byte { return o.AppendUint32(nil, v) }
	trees := map[string][]byte{
		"disjoint": enc(1, 0, 0x40, byte(1), u32(1), 0, 0,
			2, 0x10, 4, 0x20, 4, byte(0), u32(1), 1, 7,
			1, 0x14, 8, byte(1), u32(1), 2, 8,
			1, 2, 2, byte(0), u32(1), 1, 9, 0,
			0),
		"overlapping": enc(1, 0, 0x40, byte(1), u32(1), 0, 0,
			1, 0x10, 0x10, byte(0), u32(1), 1, 7,
			1, 0x8, 0x20, byte(0), u32(1), 2, 8,
			1, 0x30, 0, byte(0), u32(1), 1, 3,
			0),
		"call file 0": enc(1, 0, 0x40, byte(1), u32(1), 0, 0,
			1, 0x10, 0x10, byte(1), u32(1), 0, 7,
			1, 0, 4, byte(0), u32(1), 2, 9, 0,
			0),
	}
	for name, tree := range trees {
		for _, lt := range [][]byte{lines, backward} {
			isBackward := &lt[0] == &backward[0]
			data, _ := synth(o, []synthFunc{{addr: 0x1000, size: 0x40, name: "f", lines: lt, inline: tree}}, [][2]string{{"d", "a.go"}, {"", "b.go"}})
			r := newReader(t, data)
			fi, err := r.info(0)
			if err != nil {
				t.Fatal(err)
			}
			x := r.makeIndex(fi, 0x1000)
			if isBackward && x != nil {
				t.Errorf("%s: rows going backward got an index", name)
			}
			for a := uint64(0x1000); a < 0x1040; a++ {
				want, werr := r.lookupInfo(nil, fi, 0x1000, a)
				got, err := r.Lookup(a, nil)
				if (err != nil) != (werr != nil) || !sameFrames(got, want) {
					t.Errorf("%s: %#x: Lookup %v, %v; in place %v, %v", name, a, got, err, want, werr)
				}
				if x != nil {
					if got, ok := r.lookupIndexed(x, nil, a); ok != (werr == nil) || ok && !sameFrames(got, want) {
						t.Errorf("%s: %#x: index %v, %v; in place %v, %v", name, a, got, ok, want, werr)
					}
				}
			}
		}
	}
}

// TestConcurrentLookup looks up the same PCs from several goroutines on a
// fresh Reader, so that functions are indexed and paths joined while
// other lookups read them (run with -race): every answer must be the one
// a lone lookup gives.
func TestConcurrentLookup(t *testing.T) {
	tab := selfTable(t)
	data := writeBytes(t, tab)
	pcs := samplePCs(functions(t, tab), 3000)
	want := make([][]gosym.Location, len(pcs))
	ref := newReader(t, data)
	for i, pc := range pcs {
		want[i], _ = ref.Lookup(pc, nil)
	}
	r := newReader(t, data)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			var buf []gosym.Location
			for k := range pcs {
				i := (k + g*len(pcs)/4) % len(pcs)
				var err error
				if buf, err = r.Lookup(pcs[i], buf); err != nil || !sameFrames(buf, want[i]) {
					errs <- fmt.Errorf("%#x: %v, %v; want %v", pcs[i], buf, err, want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
