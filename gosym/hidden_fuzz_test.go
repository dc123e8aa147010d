package gosym

import (
	"errors"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"slices"
	"testing"
)

// hiddenInput returns a copy of the newest fuzz base (Go 1.26) made as
// garble would make it (magic replaced, record entries XORed with name
// offset × key when key is not 0), with its pclntab section renamed when
// rename is set (so that only the scan finds it), then damaged by patch at
// off and cut to trunc bytes (0: not cut).
func hiddenInput(t *testing.T, magic, key uint32, rename bool, off uint32, patch []byte, trunc uint32) (*memObject, []uint64) {
	i := len(fuzzBases.objs) - 1
	base := fuzzBases.objs[i]
	sec := base.section(".gopclntab")
	if sec < 0 {
		t.Fatal("no .gopclntab in the fuzz base")
	}
	m := damaged(base, sec, 0, nil, 0)
	d := m.data[sec]
	h, err := parseHeader(d)
	if err != nil {
		t.Fatal(err)
	}
	bo := m.order
	funcs := uint64(len(d) - len(h.funcs))
	for j := uint64(0); j < h.nfunc; j++ {
		rec := d[funcs+uint64(bo.Uint32(h.functab[j*8+4:])):]
		bo.PutUint32(rec, bo.Uint32(rec)^bo.Uint32(rec[4:])*key)
	}
	bo.PutUint32(d, magic)
	if rename {
		m.hdrs[sec].Name = ".rodata.moved"
	}
	return damaged(m, sec, off, patch, trunc), fuzzBases.pcs[i]
}

// FuzzHiddenTable reads garbled and moved tables, damaged: a new magic
// (known or not), garble's key, the section renamed. Undamaged, every
// looked-up PC answers as in the original table; damaged, NewTable and
// every lookup either work or fail with the promised errors.
func FuzzHiddenTable(f *testing.F) {
	loadFuzzBases(f)
	fuzzseed.Add(f, uint32(0xceaaf491), uint32(0), false, uint32(0), []byte{}, uint32(0))
	fuzzseed.Add(f, uint32(0xceaaf491), uint32(0x23375875), false, uint32(0), []byte{}, uint32(0))
	fuzzseed.Add(f, uint32(0x9381f734), uint32(0x5f7d529c), true, uint32(0), []byte{}, uint32(0))
	fuzzseed.Add(f, uint32(0xfffffff1), uint32(0x23375875), false, uint32(0), []byte{}, uint32(0))
	fuzzseed.Add(f, uint32(0xceaaf491), uint32(0x23375875), true, uint32(0x48), []byte{1, 2, 3, 4}, uint32(0))
	fuzzseed.Add(f, uint32(0xceaaf491), uint32(0x23375875), false, uint32(0), []byte{}, uint32(5000))
	f.Fuzz(func(t *testing.T, magic, key uint32, rename bool, off uint32, patch []byte, trunc uint32) {
		obj, pcs := hiddenInput(t, magic, key, rename, off, patch, trunc)
		tab, err := NewTable(obj)
		// Intact: undamaged, and readable as garble wrote it (a known
		// magic's records must agree with the functab as they are).
		_, _, known := parseMagic(obj.data[obj.section(sectionOf(rename))])
		intact := len(patch) == 0 && trunc == 0 && (key == 0 || !known)
		if err != nil {
			if !errors.Is(err, ErrCorrupted) && !errors.Is(err, ErrNoTable) {
				t.Fatalf("NewTable: unexpected error %v", err)
			}
			if intact {
				t.Fatalf("intact garbled table (magic %#x, key %#x): %v", magic, key, err)
			}
			return
		}
		if intact {
			orig, err := NewTable(fuzzBases.objs[len(fuzzBases.objs)-1])
			if err != nil {
				t.Fatal(err)
			}
			var want, got []Location
			for _, pc := range pcs {
				want, err1 := orig.ResolveLocations(pc, want[:0])
				got, err2 := tab.ResolveLocations(pc, got[:0])
				if (err1 == nil) != (err2 == nil) || !slices.Equal(want, got) {
					t.Fatalf("pc %#x: %v, %v; want %v, %v", pc, got, err2, want, err1)
				}
			}
		}
		exercise(t, tab, pcs)
		exerciseIndexes(t, tab, pcs)
	})
}

func sectionOf(renamed bool) string {
	if renamed {
		return ".rodata.moved"
	}
	return ".gopclntab"
}

// FuzzScan compares the scan for pclntab headers with a plain one that
// tries every 4-aligned offset: the same answers, on any data.
func FuzzScan(f *testing.F) {
	loadFuzzBases(f)
	for _, m := range fuzzBases.objs {
		if sec := m.section(".gopclntab"); sec >= 0 {
			d := m.data[sec]
			fuzzseed.Add(f, append([]byte{0, 0, 0, 0}, d[:min(len(d), 4096)]...), uint8(0))
		}
	}
	fuzzseed.Add(f, []byte{0x91, 0xf4, 0xaa, 0xce, 0, 0, 1, 8}, uint8(0))
	// Go 1.18–1.25's layout with garble's kind of magic: the name table
	// after zero padding (scanInputs' padded-headers).
	for _, in := range scanInputs {
		if in.name == "padded-headers" {
			fuzzseed.Add(f, in.make(3*96), uint8(0))
		}
	}
	fuzzseed.Add(f, slices.Repeat([]byte{0, 0, 1, 8}, 64), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, mis uint8) {
		addr := 0x400000 + uint64(mis%4)
		known, unknown := scanPclntab(b, addr, true)
		wk, wu := -1, -1
		for off := int((4 - addr%4) % 4); off+8 <= len(b); off += 4 {
			if _, _, ok := parseMagic(b[off:]); ok {
				if plausiblePclntab(b[off:]) {
					wk = off
					break
				}
				continue
			}
			if wu < 0 && plausibleUnknown(b[off:]) {
				wu = off
			}
		}
		if known != wk || (wk < 0 && unknown != wu) {
			t.Fatalf("scan: known %d, unknown %d; plain scan: %d, %d", known, unknown, wk, wu)
		}
	})
}
