package symbfile

import (
	"errors"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

// FuzzNewReader reads fuzzed bytes and looks up addresses in them: an
// error must wrap ErrCorrupted, nothing may panic, and a lookup gives at
// most one frame per depth of the file. The seeds are the file of
// othersFile (every feature of the format), and the first range and
// return pad messages of the test binary's files.
func FuzzNewReader(f *testing.F) {
	fuzzseed.Add(f, othersFile())
	tab := selfTable(f)
	for _, pads := range []bool{false, true} {
		data := writeBytes(f, tab, WithReturnPads(pads))
		// The magic, the header, the first string table and a few
		// records.
		cut, n := 8, 0
		for p := data[8:]; len(p) > 0 && n < 6; n++ {
			size, k := readVarint(p)
			_, k2 := readVarint(p[k:])
			m := k + k2 + int(size)
			if size > 4<<10 {
				break
			}
			cut += m
			p = p[m:]
		}
		fuzzseed.Add(f, data[:cut])
	}
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
