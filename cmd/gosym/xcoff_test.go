package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestAddr2lineGoToolAIX compares with go tool addr2line, which reads
// XCOFF, on the corpus's test program built for aix/ppc64 by the releases
// of objtest.Releases (the installed one, or those GOSYM_RELEASES lists:
// .ci/run names several from Go 1.12, the first with GOOS=aix): at every
// function's entry and last byte and the start of each of its line
// ranges, byte for byte; and its stripped twin against the unstripped
// build.
func TestAddr2lineGoToolAIX(t *testing.T) {
	if os.Getenv("GOSYM_RELEASES") == "" {
		objtest.SkipUnlessHeavy(t) // the releases phase sets GOSYM_RELEASES
	}
	if testing.Short() {
		t.Skip("cross builds")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range objtest.Releases() {
		name := v
		if name == "" {
			name = "installed"
		}
		t.Run(name, func(t *testing.T) {
			goroot := objtest.Toolchain(t, v)
			if m := testcorpus.MinorVersion(objtest.ToolchainVersion(t, goroot)); m < 12 {
				t.Skipf("Go 1.%d has no GOOS=aix", m)
			}
			exe := objtest.BuildGosymtest(t, repo, goroot, "aix", "ppc64", nil, nil)
			tab := openTable(t, exe)
			minor := testcorpus.MinorVersion(tab.GoVersion())
			if v != "" && tab.GoVersion() != v {
				t.Errorf("GoVersion = %q, want %q", tab.GoVersion(), v)
			}
			addrs := addrsOf(t, tab, 1)
			same, known := compareWithGoTool(t, exe, minor, addrs)
			t.Logf("%s aix/ppc64: %d of %d addresses identical to go tool addr2line; known differences %v", tab.GoVersion(), same, len(addrs), known)

			// The stripped twin (-s -w: no symbol table, no DWARF),
			// whose table go tool addr2line cannot find (it looks it up
			// by symbol), must have the unstripped build's functions
			// and lines, its pclntab and moduledata found by scanning.
			// The linker places the code a little differently without
			// the symbols, so functions are compared by name, and PCs
			// relative to their entry.
			stripped := openTable(t, objtest.BuildGosymtest(t, repo, goroot, "aix", "ppc64", []string{"-ldflags=-s -w"}, nil))
			if got := stripped.GoVersion(); got != tab.GoVersion() {
				t.Errorf("stripped: GoVersion = %q, want %q", got, tab.GoVersion())
			}
			got, want := functionLines(t, stripped), functionLines(t, tab)
			for i := range max(len(got), len(want)) {
				if i >= len(got) || i >= len(want) || got[i] != want[i] {
					t.Errorf("stripped build: %d functions, unstripped %d; first difference:\n got  %.500s\n want %.500s",
						len(got), len(want), at(got, i), at(want, i))
					break
				}
			}
		})
	}
}

// functionLines lists every function of tab, sorted by name, with its size
// and its line ranges relative to its entry, the test program's files
// without the directory it was built in.
func functionLines(t *testing.T, tab *gosym.Table) []string {
	t.Helper()
	var fns []string
	var lines []gosym.FunctionLine
	for fn, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		lines, err = fn.Lines(lines)
		if err != nil {
			t.Fatalf("%s: %v", fn.Name(), err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %#x", fn.Name(), fn.End()-fn.Entry())
		for _, l := range lines {
			// The program's files are in a build directory of its own.
			file := l.File
			if i := strings.Index(file, "/gopath/src/"); i >= 0 {
				file = file[i:]
			}
			fmt.Fprintf(&b, " [%#x,%#x) %s %s:%d", l.PCLo-fn.Entry(), l.PCHi-fn.Entry(), l.Function, file, l.Line)
		}
		fns = append(fns, b.String())
	}
	if len(fns) < 500 {
		t.Errorf("only %d functions", len(fns))
	}
	slices.Sort(fns)
	return fns
}

// at returns s[i], or "" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}
