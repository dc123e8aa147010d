package gosym

import (
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// compareTables checks that got answers exactly like want at every PC of
// every function of want, and reports the same GoVersion.
func compareTables(t *testing.T, got, want *Table) *agreement {
	t.Helper()
	var a agreement
	var wl, gl []Location
	for f, err := range want.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		for pc := f.Entry(); pc < f.End(); pc++ {
			wl, _ = want.ResolveLocations(pc, wl)
			var err error
			gl, err = got.ResolveLocations(pc, gl)
			a.add(err == nil && slices.Equal(wl, gl), "pc %#x: %v %v, want %v", pc, gl, err, wl)
		}
	}
	if got.GoVersion() != want.GoVersion() {
		t.Errorf("GoVersion %q, want %q", got.GoVersion(), want.GoVersion())
	}
	a.report(t, "twin")
	return &a
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
	objtest.SkipUnlessHeavy(t)
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
