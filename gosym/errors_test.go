package gosym

import (
	"errors"
	"testing"
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
