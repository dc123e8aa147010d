package gosym

import (
	"errors"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"
)

// TestUnterminatedNames removes the NULs from the function-name table
// (r05: every name then ran to the end of the table, and each read of a
// name, and the name index, cost the table's size). A record whose name
// has no NUL within maxString bytes is corrupt: NewTable fails when the
// first one is, and otherwise Functions and LookupFunction stop at the
// first damaged record; neither allocates for the names.
func TestUnterminatedNames(t *testing.T) {
	m, tab, sec := newestBase(t)
	d := m.data[sec]
	names := sectionOffset(t, d, tab.hdr.names)
	n := len(tab.hdr.names)
	normal := alloctest.Bytes(func() { NewTable(m) })

	// Every name, from the second half of the table on.
	for i := names + n/2; i < names+n; i++ {
		if d[i] == 0 {
			d[i] = 'a'
		}
	}
	half, err := NewTable(m)
	if err != nil {
		t.Fatalf("NewTable with the first name intact: %v", err)
	}
	var last error
	yielded := 0
	for f, err := range half.Functions() {
		if err != nil {
			last = err
			break
		}
		if len(f.Name()) > maxString {
			t.Fatalf("%d-byte name", len(f.Name()))
		}
		yielded++
	}
	if !errors.Is(last, ErrCorrupted) || !strings.Contains(last.Error(), "no NUL") {
		t.Errorf("Functions ends with %v, want ErrCorrupted about the name", last)
	}
	if yielded == 0 || yielded == tab.NumFunctions() {
		t.Errorf("Functions yields %d of %d functions", yielded, tab.NumFunctions())
	}
	sound, err := NewTable(fuzzBases.objs[len(fuzzBases.objs)-1])
	if err != nil {
		t.Fatal(err)
	}
	soundBytes := alloctest.Bytes(func() { sound.LookupFunction("main.main") })
	var lerr error
	if got := alloctest.Bytes(func() { _, lerr = half.LookupFunction("main.main") }); got > soundBytes {
		t.Errorf("LookupFunction allocates %d bytes, %d in the sound table", got, soundBytes)
	}
	if !errors.Is(lerr, ErrCorrupted) {
		t.Errorf("LookupFunction = %v, want ErrCorrupted", lerr)
	}

	// Every name.
	for i := names; i < names+n; i++ {
		if d[i] == 0 {
			d[i] = 'a'
		}
	}
	if got := alloctest.Bytes(func() { _, err = NewTable(m) }); got > normal+4<<10 {
		t.Errorf("NewTable allocates %d bytes, %d for the sound table", got, normal)
	}
	if !errors.Is(err, ErrCorrupted) {
		t.Errorf("NewTable without NULs = %v, want ErrCorrupted", err)
	}
}
