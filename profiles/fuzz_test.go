package profiles_test

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/profiles"
)

// FuzzSymbolize symbolizes mutated profiles (any mapping, address and
// sample that profile.Parse accepts) from the test binary: no panic, and
// a profile that still encodes.
func FuzzSymbolize(f *testing.F) {
	// A small stripped profile of this binary: its first samples.
	orig, tab := selfProfile(f)
	p := stripProfile(orig)
	p.Sample = p.Sample[:min(len(p.Sample), 8)]
	p = p.Compact()
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		f.Fatal(err)
	}
	fuzzseed.Add(f, buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		if _, err := profiles.Symbolize(p, []*gosym.Table{tab}); err != nil {
			return
		}
		if err := p.WriteUncompressed(&bytes.Buffer{}); err != nil {
			t.Fatalf("the symbolized profile does not encode: %v", err)
		}
	})
}
