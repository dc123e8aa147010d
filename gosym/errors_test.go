package gosym

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// TestErrorMessages checks that the errors of lookups say what and where,
// and match their sentinels with errors.Is (no caller needs to cut
// strings apart).
func TestErrorMessages(t *testing.T) {
	tab := selfTable(t)
	_, err := tab.ResolveFunction(1)
	if !errors.Is(err, ErrPCNotFound) || err.Error() != "gosym: pc 0x1: not found" {
		t.Errorf("ResolveFunction(1): %q", err)
	}
	_, err = tab.ResolveLocations(1, nil)
	if !errors.Is(err, ErrPCNotFound) || err.Error() != "gosym: pc 0x1: not found" {
		t.Errorf("ResolveLocations(1): %q", err)
	}
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym.TestErrorMessages")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ResolveLocations(f.End(), nil)
	if want := "gosym: pc " + hexString(f.End()) + ": not in " + f.Name(); !errors.Is(err, ErrPCNotFound) || err.Error() != want {
		t.Errorf("Function.ResolveLocations(End): %q, want %q", err, want)
	}
	_, err = tab.LookupFunction("main.nosuch")
	if !errors.Is(err, ErrFunctionNotFound) || err.Error() != "gosym: main.nosuch: function not found" {
		t.Errorf("LookupFunction: %q", err)
	}

	fe := &FormatError{Func: "main.f", Off: 0x40, Msg: "inline tree is cyclic"}
	if !errors.Is(fe, ErrCorrupted) || fe.Error() != "corrupt symbol table: main.f: inline tree is cyclic (pclntab offset 0x40)" {
		t.Errorf("FormatError: %q", fe)
	}
	var target *FormatError
	if err := error(fe); !errors.As(err, &target) || target.Func != "main.f" {
		t.Errorf("errors.As(FormatError) = %v", target)
	}
}

func hexString(v uint64) string {
	const digits = "0123456789abcdef"
	s := ""
	for {
		s = string(digits[v%16]) + s
		if v /= 16; v == 0 {
			return "0x" + s
		}
	}
}

// failingObject is an Object whose Sections or SectionData fail.
type failingObject struct {
	*memObject
	sectionsErr, dataErr error
}

func (o failingObject) Sections() ([]object.SectionHeader, error) {
	if o.sectionsErr != nil {
		return nil, o.sectionsErr
	}
	return o.memObject.Sections()
}

func (o failingObject) SectionData(i int) ([]byte, error) {
	if o.dataErr != nil {
		return nil, o.dataErr
	}
	return o.memObject.SectionData(i)
}

// TestNewTableObjectErrors checks that an object's errors reach the
// caller of NewTable wrapping both ErrCorrupted and the object's error,
// but for a closed object's, which stays fs.ErrClosed.
func TestNewTableObjectErrors(t *testing.T) {
	m, _, _ := newestBase(t)
	backend := errors.New("elfobj: section header 3 out of range")
	closed := fmt.Errorf("object: %w", fs.ErrClosed)
	for _, o := range []failingObject{
		{m, backend, nil},
		{m, nil, backend},
	} {
		_, err := NewTable(o)
		if !errors.Is(err, ErrCorrupted) || !errors.Is(err, backend) {
			t.Errorf("NewTable = %v, want an error wrapping ErrCorrupted and the object's", err)
		}
	}
	for _, o := range []failingObject{
		{m, closed, nil},
		{m, nil, closed},
	} {
		_, err := NewTable(o)
		if !errors.Is(err, fs.ErrClosed) || errors.Is(err, ErrCorrupted) {
			t.Errorf("NewTable of a closed object = %v, want fs.ErrClosed alone", err)
		}
	}
}
