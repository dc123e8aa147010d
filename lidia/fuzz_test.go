package lidia

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

// FuzzNewReader opens fuzzed bytes and looks up addresses in them: an error
// must wrap ErrCorrupted, and nothing may panic. The seeds are a small file
// written from a few functions of the test binary (inline ranges, files,
// lines), the same file with every table at its widest, the upstream
// example, and a file whose walk is one range too long (TestLongWalk).
func FuzzNewReader(f *testing.F) {
	small := smallFile(f)
	fuzzseed.Add(f, small)
	fuzzseed.Add(f, widen(f, small))
	fuzzseed.Add(f, writePyro([]pyroRange{
		{VA: 0x1139, Length: 0x20, Function: "fib", File: "fib.c", Lines: []lineEntry{{0, 3}, {8, 4}}},
		{VA: 0x1140, Length: 0x8, Depth: 1, Function: "add", File: "fib.c", CallFile: "fib.c", CallLine: 4},
		{VA: 0, Length: 0, Function: "__cxa_finalize"},
	}, true, true))
	fuzzseed.Add(f, longWalk(maxWalk+1))
	addrs := []uint64{0, 1, 0x1000, 0x1139, 0x1140, 0x401000, 1 << 32, ^uint64(0)}
	f.Fuzz(func(t *testing.T, data []byte) {
		lookupAll(t, data, addrs)
		if r, err := NewReader(data, WithCRC(), WithInlines(false), WithLines(false)); err == nil {
			for _, a := range fileAddrs(r) {
				r.Lookup(a, nil)
			}
		}
	})
}
