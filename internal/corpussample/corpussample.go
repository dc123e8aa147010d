// Package corpussample picks the corpus entries the export formats'
// oracles (gsym, symbfile) check. With the committed corpus that is every
// entry. With a full matrix (GOSYM_CORPUS_DIR, hundreds of entries), it
// is a sample chosen deterministically that still covers every release,
// every target (GOOS/GOARCH), every variant (default, pie, cgo-extlink,
// stripped, trimpath), every variant of every target, and every release
// stripped and not: the entries of the manifest, in its order, each one
// taken if it covers something the ones taken before do not. Setting
// GOSYM_EXPORT_CORPUS=all takes every entry of any corpus.
package corpussample

import (
	"os"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// Env is the environment variable that, set to "all", turns sampling off.
const Env = "GOSYM_EXPORT_CORPUS"

// MaxAll is the most entries a corpus may have for all of them to be
// checked without GOSYM_EXPORT_CORPUS=all: the committed corpus has 35.
const MaxAll = 100

// Entries returns the entries of the corpus the oracles check (see the
// package documentation), and how many the corpus has.
func Entries() (sample []testcorpus.Entry, total int, err error) {
	entries, err := testcorpus.Entries()
	if err != nil {
		return nil, 0, err
	}
	if len(entries) <= MaxAll || os.Getenv(Env) == "all" {
		return entries, len(entries), nil
	}
	return Cover(entries), len(entries), nil
}

// Cover returns the entries, in order, each of which covers a release, a
// target, a variant, a variant of a target, or a release stripped or not
// that the entries before it do not.
func Cover(entries []testcorpus.Entry) []testcorpus.Entry {
	type key struct{ kind, a, b string }
	seen := map[key]bool{}
	var out []testcorpus.Entry
	for _, e := range entries {
		target := e.GOOS + "/" + e.GOARCH
		stripped := "not stripped"
		if e.Variant == "stripped" {
			stripped = "stripped"
		}
		keys := []key{
			{"release", e.GoVersion, ""},
			{"target", target, ""},
			{"variant", e.Variant, ""},
			{"target variant", target, e.Variant},
			{"release stripped", e.GoVersion, stripped},
		}
		take := false
		for _, k := range keys {
			if !seen[k] {
				seen[k], take = true, true
			}
		}
		if take {
			out = append(out, e)
		}
	}
	return out
}

// Test returns Entries for a test, which it fails if the corpus cannot be
// read, and logs the sample's size when it is one.
func Test(tb testing.TB) []testcorpus.Entry {
	tb.Helper()
	entries, total, err := Entries()
	if err != nil {
		tb.Fatal(err)
	}
	if len(entries) < total {
		tb.Logf("%d of the corpus's %d entries: a sample covering every release, target and variant (%s=all checks every one)", len(entries), total, Env)
	}
	return entries
}
