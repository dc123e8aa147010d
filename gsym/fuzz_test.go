package gsym

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

// FuzzNewReader opens fuzzed bytes and looks up addresses in them: an
// error must wrap ErrCorrupted (NewReader, Lookup) or gosym.ErrPCNotFound
// (Lookup), nothing may panic, and Lookup must answer as reading the
// FunctionInfos in place does. The seeds are the synthetic file of
// TestSmallFile (line rows in three files, an inline tree two deep) in
// both byte orders, and the same file with 1-byte address offsets.
func FuzzNewReader(f *testing.F) {
	fuzzseed.Add(f, smallFile(binary.LittleEndian))
	fuzzseed.Add(f, smallFile(binary.BigEndian))
	addrs := []uint64{0, 0xfff, 0x1000, 0x1012, 0x1020, 0x1028, 0x1040, 0x1050, 1 << 32, ^uint64(0)}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(data)
		if err != nil {
			if !isCorrupt(err) {
				t.Fatalf("NewReader: %v, want an error wrapping ErrCorrupted", err)
			}
			return
		}
		// The addresses of the file too, and one past each.
		addrs := addrs[:len(addrs):len(addrs)]
		for i := range min(r.NumAddresses(), 64) {
			a := r.addr(i)
			addrs = append(addrs, a, a+1)
		}
		for _, a := range addrs {
			locs, err := r.Lookup(a, nil)
			if err != nil && !isCorrupt(err) && !errors.Is(err, gosym.ErrPCNotFound) {
				t.Fatalf("Lookup(%#x): %v", a, err)
			}
			if err != nil && len(locs) > 0 {
				t.Fatalf("Lookup(%#x) returned frames with %v", a, err)
			}
			if len(locs) > maxDepth+1 {
				t.Fatalf("Lookup(%#x): %d frames", a, len(locs))
			}
			// The file index must answer as reading in place does.
			if r.NumAddresses() > 0 && a >= r.base {
				want, werr := r.lookupInfos(nil, a, false)
				if (err == nil) != (werr == nil) || errors.Is(err, gosym.ErrPCNotFound) != errors.Is(werr, gosym.ErrPCNotFound) || !sameFrames(locs, want) {
					t.Fatalf("Lookup(%#x) = %v, %v; in place %v, %v", a, locs, err, want, werr)
				}
			}
		}
	})
}
