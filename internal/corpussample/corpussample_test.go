package corpussample

import (
	"fmt"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestCover checks that Cover keeps every release, target, variant,
// variant of a target and release stripped or not of a made-up matrix,
// with fewer entries than the matrix, in its order, the same each time.
func TestCover(t *testing.T) {
	var all []testcorpus.Entry
	for _, v := range []string{"go1.20.1", "go1.21.2", "go1.22.3"} {
		for _, tg := range [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"windows", "386"}} {
			for _, variant := range []string{"default", "pie", "stripped"} {
				all = append(all, testcorpus.Entry{Name: fmt.Sprintf("%s.%s-%s.%s", v, tg[0], tg[1], variant), GoVersion: v, GOOS: tg[0], GOARCH: tg[1], Variant: variant})
			}
		}
	}
	got := Cover(all)
	if len(got) >= len(all) {
		t.Errorf("Cover kept %d of %d entries", len(got), len(all))
	}
	have := map[string]bool{}
	for i, e := range got {
		if i > 0 && e.Name <= got[i-1].Name {
			t.Errorf("%s after %s: not in the matrix's order", e.Name, got[i-1].Name)
		}
		have["r "+e.GoVersion], have["t "+e.GOOS+e.GOARCH], have["tv "+e.GOOS+e.GOARCH+e.Variant] = true, true, true
		have[fmt.Sprint("rs ", e.GoVersion, e.Variant == "stripped")] = true
	}
	for _, e := range all {
		for _, k := range []string{"r " + e.GoVersion, "t " + e.GOOS + e.GOARCH, "tv " + e.GOOS + e.GOARCH + e.Variant, fmt.Sprint("rs ", e.GoVersion, e.Variant == "stripped")} {
			if !have[k] {
				t.Errorf("%s not covered", k)
			}
		}
	}
	again := Cover(all)
	for i := range got {
		if got[i].Name != again[i].Name {
			t.Fatalf("two covers differ at %d: %s, %s", i, got[i].Name, again[i].Name)
		}
	}
}

// TestEntriesCommitted checks that the committed corpus is taken whole.
func TestEntriesCommitted(t *testing.T) {
	all, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	got, total, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	if total != len(all) || len(all) <= MaxAll && len(got) != len(all) {
		t.Errorf("Entries: %d of %d; the corpus has %d", len(got), total, len(all))
	}
}
