package gosym

import (
	"os"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

func openTestTable(t testing.TB, path string) *Table {
	t.Helper()
	tab, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

func (tab *Table) obj(t testing.TB) object.Object {
	exe, _ := os.Executable()
	f, err := object.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
