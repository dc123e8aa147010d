package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/oracle"
)

// A dwarfBinary is a corpus binary with its DWARF.
type dwarfBinary struct {
	corpusBinary
	dwarf *oracle.DWARF
}

// dwarfCorpus returns the corpus binaries whose DWARF the tests compare
// with: of the first release with inlined calls in both the pclntab and
// DWARF, of a middle one, and of the installed one.
func dwarfCorpus(t *testing.T) []dwarfBinary {
	t.Helper()
	var bins []dwarfBinary
	for _, name := range []string{"go1.12.17.linux-amd64", "go1.20.14.linux-amd64", "go1.26.8.linux-amd64"} {
		b := corpusEntry(t, name)
		data, err := os.ReadFile(b.Path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := oracle.NewDWARF(data)
		if err != nil {
			t.Fatal(err)
		}
		bins = append(bins, dwarfBinary{b, d})
	}
	return bins
}

// mainFuncs returns the names of the test program's own functions in the
// binary at path.
func mainFuncs(t *testing.T, path string) []string {
	t.Helper()
	var names []string
	for _, f := range mustRunJSON[funcJSON](t, "funcs", "-json", "-match", `^main\.`, path) {
		names = append(names, f.Name)
	}
	if len(names) < 10 {
		t.Fatalf("only %d functions main.*", len(names))
	}
	return names
}

func mustAddr(t testing.TB, s string) uint64 {
	t.Helper()
	pc, err := parseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

// TestLinesDWARF compares the lines of the test program's functions with
// their DWARF: the function, file and line of each range, and the call
// site that its parent PC resolves to.
func TestLinesDWARF(t *testing.T) {
	for _, b := range dwarfCorpus(t) {
		t.Run(b.Name, func(t *testing.T) {
			tab := openTable(t, b.Path)
			checked, inlined := 0, 0
			for _, name := range mainFuncs(t, b.Path) {
				text := mustRun(t, "", "lines", b.Path, name)
				ls := mustRunJSON[lineJSON](t, "lines", "-json", b.Path, name)
				tl := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
				if len(tl) != len(ls) {
					t.Fatalf("%s: %d lines of text, %d JSON objects", name, len(tl), len(ls))
				}
				fn, err := tab.LookupFunction(name)
				if err != nil {
					t.Fatal(err)
				}
				next := hex(fn.Entry())
				for i, l := range ls {
					// Text and JSON agree; the ranges cover the function.
					want := fmt.Sprintf("%s\t%s\t%s\t%s", l.Lo, l.Hi, l.Function, fileLine(l.File, l.Line))
					if l.ParentPC != "" {
						want += "\t" + l.ParentPC
					}
					if tl[i] != want {
						t.Errorf("%s: text %q, JSON %+v", name, tl[i], l)
					}
					if l.Lo != next {
						t.Errorf("%s: range %s-%s after %s", name, l.Lo, l.Hi, next)
					}
					next = l.Hi
					if l.File == "" {
						continue // padding
					}
					frames, ok := b.dwarf.Frames(mustAddr(t, l.Lo), nil)
					if !ok {
						continue
					}
					checked++
					d := frames[0]
					if oracle.NormalizeName(d.Function) != oracle.NormalizeName(l.Function) || d.File != l.File || d.Line != int(l.Line) {
						t.Errorf("%s %s: %s %s:%d; DWARF: %s %s:%d", name, l.Lo, l.Function, l.File, l.Line, d.Function, d.File, d.Line)
						continue
					}
					if l.ParentPC == "" {
						if len(frames) > 1 && l.Function != name {
							t.Errorf("%s %s: inlined %s without a parent PC", name, l.Lo, l.Function)
						}
						continue
					}
					inlined++
					if len(frames) < 2 {
						t.Errorf("%s %s: parent PC %s, but DWARF has no inlined call", name, l.Lo, l.ParentPC)
						continue
					}
					locs, err := tab.ResolveLocations(mustAddr(t, l.ParentPC), nil)
					if err != nil {
						t.Fatal(err)
					}
					caller := frames[1]
					if oracle.NormalizeName(locs[0].Function) != oracle.NormalizeName(caller.Function) || locs[0].File != caller.File || int(locs[0].Line) != caller.Line {
						t.Errorf("%s %s: parent PC %s is at %s %s:%d; DWARF call site: %s %s:%d", name, l.Lo, l.ParentPC,
							locs[0].Function, locs[0].File, locs[0].Line, caller.Function, caller.File, caller.Line)
					}
				}
				if next != hex(fn.End()) {
					t.Errorf("%s: ranges end at %s, the function at %#x", name, next, fn.End())
				}
			}
			if inlined == 0 {
				t.Errorf("no inlined range checked")
			}
			t.Logf("%d ranges agree with DWARF, %d of them inlined", checked, inlined)
		})
	}
}
