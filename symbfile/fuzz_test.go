package symbfile

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

// FuzzNewReader reads fuzzed bytes and looks up addresses in them: an
// error must wrap ErrCorrupted, nothing may panic, and a lookup gives at
// most one frame per depth of the file. The seeds are the file of
// othersFile (every feature of the format), and files of ranges and of
// return pads written for a few functions of the test binary.
func FuzzNewReader(f *testing.F) {
	fuzzseed.Add(f, othersFile())
	tab := selfTable(f)
	fuzzseed.Add(f, smallFile(f, tab, false))
	fuzzseed.Add(f, smallFile(f, tab, true))
	addrs := []uint64{0, 1, 0x1000, 0x100a, 0x1010, 0x2004, 0x401000, 1 << 32, ^uint64(0)}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupted) {
				t.Fatalf("error not wrapping ErrCorrupted: %v", err)
			}
			return
		}
		var buf []gosym.Location
		look := func(a uint64) {
			buf, err = r.Lookup(a, buf)
			if err != nil && !errors.Is(err, gosym.ErrPCNotFound) {
				t.Fatalf("Lookup(%#x): %v", a, err)
			}
			if len(buf) > max(len(r.levels)-1, 0)+len(r.padFrames) {
				t.Fatalf("Lookup(%#x): %d frames", a, len(buf))
			}
		}
		for _, a := range addrs {
			look(a)
		}
		// A few records' addresses: a lookup can take as many frames
		// as there are ranges, so all of them would take time
		// quadratic in the input's size.
		for _, rg := range r.ranges[:min(len(r.ranges), 16)] {
			look(rg.va)
			look(rg.end - 1)
		}
		for _, p := range r.pads[:min(len(r.pads), 16)] {
			look(p.va)
		}
	})
}

// smallFile writes the ranges, or the return pads, of the first functions
// of tab that have inlined calls (up to 4), as Write would.
func smallFile(tb testing.TB, tab *gosym.Table, pads bool) []byte {
	tb.Helper()
	var out bytes.Buffer
	b := &builder{w: &out, strIdx: map[string]int32{}, pads: pads, budget: 1 << 30}
	b.out = append(b.out, magic...)
	b.message(mtHeader, nil)
	find, err := callFinderFor(runtime.GOARCH, tab.Object())
	if err != nil && pads {
		tb.Skip(err)
	}
	n := 0
	var calls []gosym.InlinedCall
	for f, err := range tab.Functions() {
		if err != nil {
			tb.Fatal(err)
		}
		if calls, err = f.InlinedCalls(calls); err != nil || len(calls) == 0 || len(calls) > 4 {
			continue
		}
		if pads {
			var code []byte
			if code, err = f.Code(); err == nil {
				err = b.addPads(f, find(code, f.Entry(), nil))
			}
		} else {
			err = b.addFunction(f)
		}
		if err != nil {
			tb.Fatal(err)
		}
		if n++; n == 4 {
			break
		}
	}
	if err := b.flush(); err != nil {
		tb.Fatal(err)
	}
	out.Write(b.out)
	return out.Bytes()
}
