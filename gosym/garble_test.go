package gosym

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/garbletest"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// garbleModes are the garble builds TestGarble checks: every obfuscation
// mode, fixed seeds and random ones, with and without -ldflags=-s -w.
var garbleModes = []struct {
	name   string
	garble []string
	strip  bool
}{
	{"default", nil, false},
	{"default-s-w", nil, true},
	{"literals-seedA", []string{"-literals", "-seed=o7Xbnb5tS8uGpZtE4kgmyQ"}, false},
	{"literals-s-w", []string{"-literals"}, true},
	{"tiny", []string{"-tiny"}, false},
	{"tiny-seedB-s-w", []string{"-tiny", "-seed=G4pOTPl7nB7kXo0hzlGHXg"}, true},
	{"seedrandom", []string{"-seed=random"}, false},
	{"all-random-s-w", []string{"-literals", "-tiny", "-seed=random"}, true},
}

// TestGarble reads binaries built by garble v0.18.0 (Go 1.27.3) from the
// corpus's test program (testdata/src/gopath/src/gosymtest) in every
// mode, and compares the table with the garbled program's own
// runtime.CallersFrames self-report at every PC it reports: its
// obfuscated names, files and lines, every inlined frame. Info must say
// what was repaired: the unknown magic and garble's entry key.
func TestGarble(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	env := garbletest.Setup(t)
	src := garbletest.CopyModule(t, filepath.Join(testcorpus.Dir(), "..", "src", "gopath", "src", "gosymtest"), "gosymtest")
	for _, m := range garbleModes {
		t.Run(m.name, func(t *testing.T) {
			var build []string
			if m.strip {
				build = []string{"-ldflags=-s -w"}
			}
			bin := env.Build(t, src, m.garble, build)
			out, err := exec.Command(bin, "-selfreport").Output()
			if err != nil {
				t.Fatalf("%s -selfreport: %v", bin, err)
			}
			rep, err := testcorpus.ParseReport(out)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			in := tab.Info()
			t.Logf("info: %v, found by %q, repairs %q, validated %q", in, in.FoundBy, in.Repairs, in.Validated)
			checkGarbleInfo(t, tab)
			if a := compareSelfReport(t, tab, rep, 27); a.unexplained() > 0 {
				t.Errorf("%d of %d PCs disagree with the self-report", a.unexplained(), a.checked)
			}
		})
	}
}

// checkGarbleInfo checks what Info says of a garbled table: an unknown
// magic read as the Go 1.20 layout, and the entry key undone.
func checkGarbleInfo(t *testing.T, tab *Table) {
	t.Helper()
	in := tab.Info()
	if _, _, ok := parseMagic(tab.data); ok {
		t.Errorf("magic %#x is a known one: not a garbled table?", in.Magic)
	}
	if in.Version != "1.20" || in.EntryKey == 0 {
		t.Errorf("Info: version %q, entry key %#x; want 1.20 and a key", in.Version, in.EntryKey)
	}
	if !strings.Contains(in.Repairs, "unknown magic") || !strings.Contains(in.Repairs, "garble") {
		t.Errorf("Info.Repairs = %q; want the magic and the key", in.Repairs)
	}
}
