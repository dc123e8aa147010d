package gosym

import (
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// compareTables checks that got answers exactly like want at every PC of
// every function of want.
func compareTables(t *testing.T, got, want *Table) {
	t.Helper()
	var a, b []Location
	n, bad := 0, 0
	for f, err := range want.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		for pc := f.Entry(); pc < f.End(); pc++ {
			a, _ = want.ResolveLocations(pc, a)
			var err error
			b, err = got.ResolveLocations(pc, b)
			n++
			if err != nil || !equalLocations(a, b) {
				if bad++; bad <= 5 {
					t.Errorf("pc %#x: %v %v, want %v", pc, b, err, a)
				}
			}
		}
	}
	if bad > 0 || n == 0 {
		t.Errorf("%d of %d PCs differ", bad, n)
	}
	if got.GoVersion() != want.GoVersion() {
		t.Errorf("GoVersion %q, want %q", got.GoVersion(), want.GoVersion())
	}
}

func mustTable(t *testing.T, bin []byte) *Table {
	t.Helper()
	obj, err := object.NewBytes(bin)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(obj)
	if err != nil {
		t.Fatalf("NewTable: %v", err)
	}
	return tab
}

// TestStrippedTwins checks that binaries without symbols (-ldflags=-s -w)
// and ELF files without section headers answer exactly like their
// unstripped twins, for every target the installed toolchain builds.
func TestStrippedTwins(t *testing.T) {
	for _, c := range crossTargets {
		t.Run(c.name, func(t *testing.T) {
			full := buildCorpusProgram(t, c.name, c.goos, c.goarch, c.flags, c.cgo)
			ldflags := "-ldflags=-s -w"
			flags := c.flags
			if c.cgo {
				ldflags, flags = "-ldflags=-s -w -linkmode=external", c.flags[:1]
			}
			stripped := buildCorpusProgram(t, c.name+"-sw", c.goos, c.goarch, append(flags[:len(flags):len(flags)], ldflags), c.cgo)
			want := mustTable(t, full)
			variants := map[string][]byte{"-s -w": stripped}
			if c.goos == "linux" {
				variants["no section headers"] = objtest.StripSectionHeaders(t, full)
				variants["-s -w, no section headers"] = objtest.StripSectionHeaders(t, stripped)
			}
			for name, bin := range variants {
				t.Run(name, func(t *testing.T) {
					got := mustTable(t, bin)
					in := got.Info()
					t.Logf("pclntab: %s; moduledata: %s", in.FoundBy, in.ModuledataFoundBy)
					compareTables(t, got, want)
				})
			}
		})
	}
}

// TestCorpusWithoutSectionHeaders removes the section headers (and with
// them the symbols) of every corpus binary, from Go 1.2 to the newest
// release, and checks that it answers exactly like the original.
func TestCorpusWithoutSectionHeaders(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.GOOS != "linux" {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			want := mustTable(t, bin)
			got := mustTable(t, objtest.StripSectionHeaders(t, bin))
			in := got.Info()
			t.Logf("pclntab: %s; moduledata: %s", in.FoundBy, in.ModuledataFoundBy)
			compareTables(t, got, want)
		})
	}
}
