package gosym

import (
	"os"
	"testing"

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
