package main

import (
	"bufio"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/oracle"
)

// TestInlinesDWARF checks the inlined functions of the test program's
// functions, and their tree, against DWARF's inlined subroutines.
func TestInlinesDWARF(t *testing.T) {
	for _, b := range dwarfCorpus(t) {
		t.Run(b.Name, func(t *testing.T) {
			nodes, ranges := 0, 0
			for _, name := range mainFuncs(t, b.Path) {
				// The flat list: every function DWARF shows inlined
				// somewhere in name is listed, with its file.
				listed := map[string]string{}
				text := mustRun(t, "", "inlines", b.Path, name)
				for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
					if line == "" {
						continue
					}
					fn, fl, _ := strings.Cut(line, "\t")
					listed[oracle.NormalizeName(fn)] = fl
				}
				for _, in := range mustRunJSON[inlineJSON](t, "inlines", "-json", b.Path, name) {
					if listed[oracle.NormalizeName(in.Name)] != fileLine(in.File, in.StartLine) {
						t.Errorf("%s: inlines -json %+v, text %q", name, in, listed[in.Name])
					}
				}
				inDWARF := map[string]bool{}
				for _, l := range mustRunJSON[lineJSON](t, "lines", "-json", b.Path, name) {
					frames, ok := b.dwarf.Frames(mustAddr(t, l.Lo), nil)
					if !ok {
						continue
					}
					for _, f := range frames[:len(frames)-1] {
						inDWARF[oracle.NormalizeName(f.Function)] = true
						fl, ok := listed[oracle.NormalizeName(f.Function)]
						if !ok {
							t.Errorf("%s: DWARF has %s inlined at %s, inlines does not list it", name, f.Function, l.Lo)
						} else if f == frames[0] && !strings.HasPrefix(fl, f.File+":") {
							t.Errorf("%s: inlines says %s is in %s; DWARF at %s: %s", name, f.Function, fl, l.Lo, f.File)
						}
					}
				}

				// The tree: at the start of each range of a call,
				// DWARF's inline stack has the callee at that depth,
				// called from the call site.
				treeNames := map[string]bool{}
				for _, c := range mustRunJSON[inlineCallJSON](t, "inlines", "-tree", "-json", b.Path, name) {
					nodes++
					treeNames[oracle.NormalizeName(c.Name)] = true
					for _, r := range c.Ranges {
						frames, ok := b.dwarf.Frames(mustAddr(t, r[0]), nil)
						if !ok {
							continue
						}
						ranges++
						i := len(frames) - 1 - c.Depth
						if i < 0 {
							t.Errorf("%s: %s inlined at depth %d at %s; DWARF: %v", name, c.Name, c.Depth, r[0], frames)
							continue
						}
						callee, caller := frames[i], frames[i+1]
						if oracle.NormalizeName(callee.Function) != oracle.NormalizeName(c.Name) ||
							caller.File != c.CallFile || caller.Line != int(c.CallLine) {
							t.Errorf("%s: %s called at %s:%d, range %v; DWARF: %s called at %s:%d",
								name, c.Name, c.CallFile, c.CallLine, r, callee.Function, caller.File, caller.Line)
						}
					}
				}
				if !reflect.DeepEqual(treeNames, inDWARF) && len(inDWARF) > 0 {
					t.Errorf("%s: the tree has %v, DWARF %v", name, treeNames, inDWARF)
				}
			}
			if nodes == 0 {
				t.Error("no inlined call")
			}
			t.Logf("%d inlined calls, %d of their ranges agree with DWARF", nodes, ranges)
		})
	}
}

// TestInlinesSelf checks the inlined functions of callInlined against the
// source of this package.
func TestInlinesSelf(t *testing.T) {
	path := selfPath(t)
	out := mustRun(t, "", "inlines", path, pkg+"callInlined")
	file := sourceFile(t, path, pkg+"callInlined")
	want := pkg + "inlinedMiddle\t" + file + ":" + funcLine(t, file, "inlinedMiddle") + "\n" +
		pkg + "inlinedLeaf\t" + file + ":" + funcLine(t, file, "inlinedLeaf") + "\n"
	// runtime.Callers may be inlined too, into inlinedLeaf (not with
	// -race).
	rest, ok := strings.CutPrefix(out, want)
	if !ok || rest != "" && !strings.HasPrefix(rest, "runtime.Callers\t") || strings.Count(rest, "\n") > 1 {
		t.Errorf("inlines callInlined:\n%s\nwant\n%s", out, want)
	}

	tree := mustRun(t, "", "inlines", "-tree", path, pkg+"callInlined")
	lines := strings.Split(tree, "\n")
	if len(lines) < 4 ||
		lines[0] != pkg+"callInlined "+file+":"+funcLine(t, file, "callInlined") ||
		!strings.HasPrefix(lines[1], "  addr2line_test.go:"+lineOf(t, file, "return inlinedMiddle(pcs)")+" "+pkg+"inlinedMiddle [0x") ||
		!strings.HasPrefix(lines[2], "    addr2line_test.go:"+lineOf(t, file, "return inlinedLeaf(pcs)")+" "+pkg+"inlinedLeaf [0x") {
		t.Errorf("inlines -tree callInlined:\n%s", tree)
	}
}

// sourceFile returns the source file of the named function.
func sourceFile(t *testing.T, path, name string) string {
	t.Helper()
	fs := mustRunJSON[funcJSON](t, "funcs", "-json", "-match", "^"+strings.ReplaceAll(name, ".", `\.`)+"$", path)
	if len(fs) != 1 {
		t.Fatalf("funcs %s: %v", name, fs)
	}
	return fs[0].File
}

// lineOf returns the number of the first line of file that contains s.
func lineOf(t *testing.T, file, s string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), s) {
			return strconv.Itoa(n)
		}
	}
	t.Fatalf("%q not in %s", s, file)
	return ""
}

// funcLine returns the line of the func keyword of the function name.
func funcLine(t *testing.T, file, name string) string {
	return lineOf(t, file, "func "+name+"(")
}
