package objfile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

// cstring is the plain reading of the name at off in tab, for comparison.
func cstring(tab []byte, off uint64) (string, bool) {
	if off >= uint64(len(tab)) {
		return "", false
	}
	n := bytes.IndexByte(tab[off:], 0)
	if n < 0 {
		return "", false
	}
	return string(tab[off : off+uint64(n)]), true
}

// checkTable compares every name of tab, and Has and HasPrefixed of each,
// with cstring.
func checkTable(t *testing.T, tab []byte) {
	t.Helper()
	st := NewStringTable(tab)
	for off := range uint64(len(tab)) + 2 {
		got, ok := st.Name(off)
		want, wantOK := cstring(tab, off)
		if got != want || ok != wantOK {
			t.Fatalf("Name(%d) = %.20q, %v; want %.20q, %v", off, got, ok, want, wantOK)
		}
		if wantOK && (!st.Has(off, want) || len(want) > 0 && !st.HasPrefixed(off, want[:1], want[1:])) {
			t.Fatalf("Has(%d, %.20q) or HasPrefixed is false", off, want)
		}
		if st.Has(off, want+"x") || len(want) > 0 && st.Has(off, want[:len(want)-1]) {
			t.Fatalf("Has(%d) is true for a name that is not %.20q", off, want)
		}
	}
}

func TestStringTable(t *testing.T) {
	long := strings.Repeat("x", 3*shortName)
	for _, tab := range []string{
		"",
		"\x00",
		"abc",
		"\x00abc\x00de\x00",
		"\x00abc\x00de",
		"\x00" + long + "\x00y\x00" + long,
		long + "\x00" + long + "\x00",
		strings.Repeat("a\x00", 2*shortName),
	} {
		checkTable(t, []byte(tab))
	}
}

// TestStringTableRuns checks that names that all run to the end of a
// long table (a damaged one) cost its size once: a copy and an index of
// its NULs, whatever their number.
func TestStringTableRuns(t *testing.T) {
	tab := bytes.Repeat([]byte("x"), 1<<20)
	for i := 1 << 19; i < len(tab); i += 1 << 16 {
		tab[i] = 0 // a few NULs in the second half
	}
	tab[len(tab)-1] = 0
	var total int
	n := alloctest.Bytes(func() {
		st := NewStringTable(tab)
		for off := uint64(0); off < uint64(len(tab)); off += 61 {
			name, ok := st.Name(off)
			if !ok {
				t.Fatalf("Name(%d) failed", off)
			}
			total += len(name)
		}
	})
	if total < 1<<30 || n > 2*uint64(len(tab)) {
		t.Errorf("names of %d bytes in all allocated %d bytes for a table of %d; want more than 1 GiB and at most twice the table", total, n, len(tab))
	}
}

// TestHasAllocates checks that comparing names allocates nothing.
func TestHasAllocates(t *testing.T) {
	tab := []byte("\x00runtime.firstmoduledata\x00_runtime.text\x00")
	st := NewStringTable(tab)
	if n := testing.AllocsPerRun(100, func() {
		if !st.Has(1, "runtime.firstmoduledata") || !st.HasPrefixed(25, "_", "runtime.text") {
			t.Fatal("names not found")
		}
	}); n != 0 {
		t.Errorf("Has allocates %v times", n)
	}
}

func FuzzStringTable(f *testing.F) {
	fuzzseed.Add(f, []byte("\x00abc\x00de\x00"))
	fuzzseed.Add(f, []byte("\x00"+strings.Repeat("x", 2*shortName)+"\x00y"))
	fuzzseed.Add(f, []byte(strings.Repeat("ab\x00", shortName/2)+strings.Repeat("c", shortName+3)+"\x00"))
	f.Fuzz(func(t *testing.T, tab []byte) {
		if len(tab) > 4*shortName {
			return // each offset is checked
		}
		checkTable(t, tab)
	})
}
