package gosym

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// openTestTable opens the Table of the executable at path for the duration
// of the test.
func openTestTable(t testing.TB, path string) *Table {
	t.Helper()
	tab, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

// selfTable opens the Table of the running test binary.
func selfTable(t testing.TB) *Table {
	t.Helper()
	return openTestTable(t, selfPath(t))
}

// selfObject opens the running test binary as an Object.
func selfObject(t testing.TB) object.Object {
	t.Helper()
	f, err := object.Open(selfPath(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func selfPath(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable path:", err)
	}
	return exe
}

func TestInfo(t *testing.T) {
	tab := selfTable(t)
	in := tab.Info()
	if in.Version != "1.20" || in.FoundBy != "section .gopclntab" || in.ModuledataFoundBy == "" ||
		in.NumFuncs != tab.NumFunctions() || in.NumFiles == 0 || in.TextStart >= in.TextEnd {
		t.Errorf("Info() = %+v", in)
	}
	f, err := tab.ResolveFunction(in.TextStart)
	if err != nil || f.Entry() != in.TextStart {
		t.Errorf("first function: %v %v", f.Entry(), err)
	}
	t.Log(in)
}

// treeFrames builds the logical frames at a PC from the inline tree
// alone (Function.Lines for the innermost call and position,
// Function.InlinedCalls for the parents and call sites), for comparison
// with the oracles. It keeps the tree of the last function it met.
type treeFrames struct {
	f     Function
	calls []InlinedCall
	lines []FunctionLine
}

// at appends to dst[:0] the frames at pc, innermost first.
func (s *treeFrames) at(tab *Table, pc uint64, dst []Location) ([]Location, error) {
	dst = dst[:0]
	if s.f.t == nil || pc < s.f.Entry() || pc >= s.f.End() {
		f, err := tab.ResolveFunction(pc)
		if err != nil {
			return dst, err
		}
		s.f = f
		if s.calls, err = f.InlinedCalls(s.calls); err != nil {
			return dst, err
		}
		if s.lines, err = f.Lines(s.lines); err != nil {
			return dst, err
		}
	}
	ranges := s.lines
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i].PCHi > pc })
	if i == len(ranges) || ranges[i].PCLo > pc {
		return dst, fmt.Errorf("pc %#x: in no range of Lines", pc)
	}
	r := ranges[i]
	file, line := r.File, r.Line
	for k := r.Call; k >= 0; k = s.calls[k].Parent {
		c := s.calls[k]
		dst = append(dst, Location{Function: c.Name, File: file, Line: line, StartLine: c.StartLine, Wrapper: c.Wrapper})
		file, line = c.CallFile, c.CallLine
	}
	f := s.f
	return append(dst, Location{Function: f.Name(), File: file, Line: line, StartLine: f.StartLine(), Wrapper: f.Wrapper()}), nil
}

// forEachEntry runs check on every binary of the corpus (testdata/corpus
// or $GOSYM_CORPUS_DIR), one parallel subtest each.
func forEachEntry(t *testing.T, check func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table)) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			check(t, e, bin, mustTable(t, bin))
		})
	}
}
