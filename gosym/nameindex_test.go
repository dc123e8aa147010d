package gosym

import (
	"errors"
	"slices"
	"testing"
)

// TestLookupFunctionSharedName gives every function one long name (the
// class of issue 21's r05, whose name table has no NUL, so that every
// name runs to its end): the first lookup by name reads the names of all
// functions, and must stop once it has read more than a few times the
// name table, with an error.
func TestLookupFunctionSharedName(t *testing.T) {
	loadFuzzBases(t)
	base := fuzzBases.objs[len(fuzzBases.objs)-1]
	tab, err := NewTable(base)
	if err != nil {
		t.Fatal(err)
	}
	names := tab.hdr.names
	long := len(names) / 2 // from the middle of the table to its last byte, a NUL
	m := &memObject{order: base.order, hdrs: base.hdrs}
	for _, d := range base.data {
		orig := d
		d = slices.Clone(d)
		if at, ok := offsetIn(orig, names); ok {
			for i := range long - 1 {
				d[at+uint64(len(names)-long+i)] = 'x'
			}
			d[at+uint64(len(names)-1)] = 0
		}
		if at, ok := offsetIn(orig, tab.hdr.funcs); ok {
			for i := range tab.hdr.nfunc {
				f, _, err := tab.funcAt(i)
				if err != nil {
					t.Fatal(err)
				}
				base.order.PutUint32(d[at+uint64(f.off)+uint64(tab.layout.nameOff):], uint32(len(names)-long))
			}
		}
		m.data = append(m.data, d)
	}
	shared, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d functions named by one name of %d bytes", shared.hdr.nfunc, long-1)
	_, err = shared.LookupFunction("main.main")
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Msg != errNameWork || !errors.Is(err, ErrCorrupted) {
		t.Errorf("LookupFunction: %v, want %q", err, errNameWork)
	}
	for _, err := range shared.LookupFunctions("main.main") {
		if !errors.As(err, &fe) || fe.Msg != errNameWork {
			t.Errorf("LookupFunctions: %v, want %q", err, errNameWork)
		}
	}
}
