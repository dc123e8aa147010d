package main

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/oracle"
)

// TestFuncsStdlib compares funcs with debug/gosym's function table for the
// corpus: entries, ends and names, and the file and line at each entry.
func TestFuncsStdlib(t *testing.T) {
	for _, b := range corpus(t) {
		t.Run(b.Name, func(t *testing.T) {
			if b.stdlibBlind() {
				t.Skip("debug/gosym cannot find the table of a stripped PE or Plan 9 file")
			}
			data, err := os.ReadFile(b.Path)
			if err != nil {
				t.Fatal(err)
			}
			std, err := oracle.NewStdlibPclntab(data)
			if err != nil {
				t.Fatal(err)
			}
			want := std.Funcs()
			text := mustRun(t, "", "funcs", b.Path)
			got := mustRunJSON[funcJSON](t, "funcs", "-json", b.Path)
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			if len(got) != len(want) || len(lines) != len(want) {
				t.Fatalf("%d functions (%d lines of text), debug/gosym has %d", len(got), len(lines), len(want))
			}
			tab := openTable(t, b.Path)
			bad := 0
			for i, f := range got {
				w := want[i]
				if f.Entry != hex(w.Low) || f.End != hex(w.High) || f.Name != w.Name {
					if bad++; bad <= 10 {
						t.Errorf("function %d: %s %s %s; debug/gosym: %#x %#x %s", i, f.Entry, f.End, f.Name, w.Low, w.High, w.Name)
					}
					continue
				}
				file, line, _ := std.PCToLine(w.Low)
				gotFL, wantFL := fmt.Sprintf("%s:%d", f.File, f.EntryLine), fmt.Sprintf("%s:%d", file, line)
				if f.File == "" && f.EntryLine == 0 {
					gotFL = fileLine("", 0) // as go tool addr2line spells an unknown line
				}
				if gotFL != wantFL && knownDifference(tab, b.Minor(), w.Low, [2]string{w.Name, wantFL}, [2]string{w.Name, gotFL}) == "" {
					if bad++; bad <= 10 {
						t.Errorf("%s: file:line at entry %s; debug/gosym says %s", f.Name, gotFL, wantFL)
					}
				}
				// The text line says the same as the JSON one.
				line32 := f.StartLine
				if line32 == 0 {
					line32 = f.EntryLine
				}
				if wantText := fmt.Sprintf("%s\t%s\t%s\t%s", f.Entry, f.End, f.Name, fileLine(f.File, line32)); lines[i] != wantText {
					if bad++; bad <= 10 {
						t.Errorf("text line %q, want %q", lines[i], wantText)
					}
				}
				if (f.StartLine != 0) != (b.Minor() >= 20) && f.File != "" {
					if bad++; bad <= 10 {
						t.Errorf("%s: start line %d in a Go 1.%d binary", f.Name, f.StartLine, b.Minor())
					}
				}
			}
		})
	}
}

// TestFuncsRuntime checks funcs of the running test binary against the
// runtime, and against the source for the line of a func keyword.
func TestFuncsRuntime(t *testing.T) {
	path := selfPath(t)
	got := mustRunJSON[funcJSON](t, "funcs", "-json", "-match", "^"+regexp.QuoteMeta(pkg), path)
	if len(got) < 50 {
		t.Fatalf("only %d functions of package main", len(got))
	}
	tab := openTable(t, path)
	fn, err := tab.LookupFunction(pkg + "run")
	if err != nil {
		t.Fatal(err)
	}
	bias := uint64(reflect.ValueOf(run).Pointer()) - fn.Entry()
	for _, f := range got {
		entry, err := parseAddr(f.Entry)
		if err != nil {
			t.Fatal(err)
		}
		rf := runtime.FuncForPC(uintptr(entry + bias))
		if rf == nil || rf.Entry() != uintptr(entry+bias) {
			t.Errorf("%s: the runtime has no function at %s", f.Name, f.Entry)
			continue
		}
		file, line := rf.FileLine(rf.Entry())
		if rf.Name() != oracle.PrintName(f.Name) || file != f.File || line != int(f.EntryLine) {
			t.Errorf("%s %s:%d; runtime: %s %s:%d", f.Name, f.File, f.EntryLine, rf.Name(), file, line)
		}
	}

	// The func keyword of run, found in the source.
	var runJSON *funcJSON
	for i := range got {
		if got[i].Name == pkg+"run" {
			runJSON = &got[i]
		}
	}
	if runJSON == nil {
		t.Fatal("funcs does not list run")
	}
	if n := funcLine(t, runJSON.File, "run"); fmt.Sprint(runJSON.StartLine) != n {
		t.Errorf("run: start line %d, but its func keyword is on line %s of %s", runJSON.StartLine, n, runJSON.File)
	}
}

func TestFuncsMatch(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	all := strings.Split(mustRun(t, "", "funcs", b.Path), "\n")
	re := regexp.MustCompile(`^main\.`)
	var want strings.Builder
	for _, l := range all {
		if name := strings.Split(l+"\t\t", "\t")[2]; re.MatchString(name) {
			want.WriteString(l + "\n")
		}
	}
	// Flags after the binary work too.
	got := mustRun(t, "", "funcs", b.Path, "-match", `^main\.`)
	if got != want.String() || strings.Count(got, "\n") < 5 {
		t.Errorf("funcs -match ^main\\.:\n%s\nwant\n%s", got, want.String())
	}
	if out, errOut, status := gosymCmd(t, "", "funcs", "-match", "(", b.Path); status != 2 || out != "" || !strings.Contains(errOut, "bad -match") {
		t.Errorf("bad regexp: status %d, stderr %q", status, errOut)
	}
}
