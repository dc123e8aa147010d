package gosym

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestRuntimeFrames checks every PC of this test binary against what its
// own runtime reports through runtime.CallersFrames, inline frames included.
// The runtime hides compiler-generated wrapper frames and prints generic
// names as pkg.F[...]; the comparison applies the same rules to our answers.
func TestRuntimeFrames(t *testing.T) {
	tab := selfTable(t)
	if tab.GoVersion() != runtime.Version() {
		t.Errorf("GoVersion = %q, runtime says %q", tab.GoVersion(), runtime.Version())
	}
	bias := loadBias(t, tab)
	t.Logf("load bias %#x", bias)

	var locs, treeLocs []Location
	var want, got []string
	var tree treeFrames
	checked, mismatches, treeMismatches, stride := 0, 0, 0, 1
	if testing.Short() {
		stride = 7
	}
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		// At a function's last byte, pc+1 is the next function's entry.
		for pc := f.Entry(); pc+1 < f.End(); pc += uint64(stride) {
			want = runtimeFrames(want[:0], uintptr(pc+bias))
			locs, err = f.ResolveLocations(pc, locs)
			if err != nil {
				t.Fatalf("ResolveLocations(%#x): %v", pc, err)
			}
			got = visibleFrames(got[:0], locs)
			// The runtime reads a name at offset 0 of its name table as
			// no name; the first function's name is stored there.
			for i := range min(len(got), len(want)) {
				if strings.HasPrefix(want[i], " ") {
					got[i] = got[i][strings.IndexByte(got[i], ' '):]
				}
			}
			if !slices.Equal(got, want) {
				if mismatches++; mismatches <= 20 {
					t.Errorf("pc %#x in %s:\n got  %q\n want %q", pc, f.Name(), got, want)
				}
			}
			// The same frames built from the inline tree.
			treeLocs, err = tree.at(tab, pc, treeLocs)
			if err != nil {
				t.Fatalf("inline tree at %#x: %v", pc, err)
			}
			if got = visibleFrames(got[:0], treeLocs); len(got) == len(want) {
				for i := range got {
					if strings.HasPrefix(want[i], " ") {
						got[i] = got[i][strings.IndexByte(got[i], ' '):]
					}
				}
			}
			if !slices.Equal(got, want) {
				if treeMismatches++; treeMismatches <= 20 {
					t.Errorf("pc %#x in %s, frames from the inline tree:\n got  %q\n want %q", pc, f.Name(), got, want)
				}
			}
			checked++
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d PCs disagree with runtime.CallersFrames", mismatches, checked)
	}
	if treeMismatches > 0 {
		t.Errorf("%d of %d PCs: frames from the inline tree disagree with runtime.CallersFrames", treeMismatches, checked)
	}
	t.Logf("%d PCs agree with runtime.CallersFrames", checked)
	if checked < 10000 {
		t.Errorf("only %d PCs checked", checked)
	}
}

// runtimeFrames appends what runtime.CallersFrames reports at pc, one
// "function file:line" string per frame, innermost first.
func runtimeFrames(dst []string, pc uintptr) []string {
	frames := runtime.CallersFrames([]uintptr{pc + 1, 0})
	for {
		fr, more := frames.Next()
		if fr.PC != 0 {
			file := fr.File
			if file == "?" {
				file = ""
			}
			dst = append(dst, frameString(fr.Function, file, uint32(fr.Line)))
		}
		if !more {
			return dst
		}
	}
}

// visibleFrames formats locs as runtime.CallersFrames would show them:
// wrappers elided unless called from a panic function, generic names
// printed with [...].
func visibleFrames(dst []string, locs []Location) []string {
	last := ""
	for i, l := range locs {
		if i > 0 && l.Wrapper && !panicFunc(last) {
			continue
		}
		last = l.Function
		dst = append(dst, frameString(printName(l.Function), l.File, l.Line))
	}
	return dst
}

func panicFunc(name string) bool {
	return name == "runtime.gopanic" || name == "runtime.sigpanic" || name == "runtime.panicwrap"
}

func frameString(fn, file string, line uint32) string {
	var b strings.Builder
	b.WriteString(fn)
	b.WriteByte(' ')
	b.WriteString(file)
	b.WriteByte(':')
	b.WriteString(uitoa(line))
	return b.String()
}

func uitoa(v uint32) string {
	var buf [10]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(buf[i:])
		}
	}
}

// printName returns name as runtime tracebacks print it since Go 1.21.
func printName(name string) string {
	i := strings.IndexByte(name, '[')
	j := strings.LastIndexByte(name, ']')
	if i < 0 || j <= i {
		return name
	}
	return name[:i+1] + "..." + name[j:]
}

// loadBias returns the difference between run-time and link-time addresses
// of this test binary (non-zero when it is position independent).
func loadBias(t *testing.T, tab *Table) uint64 {
	t.Helper()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym.loadBias")
	if err != nil {
		t.Fatal(err)
	}
	pc, _, _, _ := runtime.Caller(0)
	rf := runtime.FuncForPC(pc)
	return uint64(rf.Entry()) - f.Entry()
}

func runtimeVersion() string { return runtime.Version() }
