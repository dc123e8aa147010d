package symbfile

import (
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/corpussample"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// roundTrip checks a file of ranges written for tab at every PC of every
// function: Reader.Lookup must return ResolveLocations' frames
// (functions, files, lines); addresses outside the functions give
// ErrPCNotFound. It returns the number of PCs and frames checked.
func roundTrip(t *testing.T, tab *gosym.Table, data []byte) (pcs, frames int) {
	t.Helper()
	r := newReader(t, data)
	var locs, got []gosym.Location
	bad := 0
	fns := functions(t, tab)
	var err error
	for _, f := range fns {
		for pc := f.Entry(); pc < f.End(); pc += pcStride {
			if locs, err = f.ResolveLocations(pc, locs); err != nil {
				t.Fatalf("%s pc %#x: %v", f.Name(), pc, err)
			}
			if got, err = r.Lookup(pc, got); err != nil {
				t.Fatalf("pc %#x: Lookup: %v", pc, err)
			}
			pcs++
			frames += len(locs)
			if !sameFrames(got, locs) {
				if bad++; bad <= 10 {
					t.Errorf("pc %#x:\n got  %v\n want %v", pc, got, locs)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d PCs disagree", bad, pcs)
	}
	for _, pc := range []uint64{0, fns[0].Entry() - 1, fns[len(fns)-1].End(), ^uint64(0)} {
		if got, err = r.Lookup(pc, got); !errorsIsNotFound(err) || len(got) != 0 {
			t.Errorf("Lookup(%#x) outside the functions = %v, %v", pc, got, err)
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

func TestRoundTripCorpus(t *testing.T) {
	entries := corpussample.Test(t)
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			tab := entryTable(t, e)
			data := writeBytes(t, tab)
			pcs, frames := roundTrip(t, tab, data)
			t.Logf("%s: %d PCs, %d frames agree (file of %d bytes)", e.Name, pcs, frames, len(data))
		})
	}
}

// TestRoundTripToolchain checks the go binary of the installed toolchain
// at every PC, its ranges and its return pads through protoc (heavy).
func TestRoundTripToolchain(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	tab := openTable(t, toolBinary(t))
	pcs, frames := roundTrip(t, tab, writeBytes(t, tab))
	t.Logf("go: %d PCs, %d frames agree", pcs, frames)
	pads := checkOraclePads(t, tab, writeBytes(t, tab, WithReturnPads(true)))
	t.Logf("go: %d return pads agree", len(pads))
}
