package gosym

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/alloctest"

	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestCorpusLookupFunctions checks LookupFunctions against debug/gosym's
// function list on every corpus binary: each name yields exactly the
// entries debug/gosym lists under it, in address order, and the name
// without type arguments yields every instantiation. LookupFunction
// returns the first of them.
func TestCorpusLookupFunctions(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		std, err := oracle.NewStdlibPclntab(bin)
		if err != nil {
			t.Skipf("debug/gosym cannot read it (its unstripped twin is checked): %v", err)
		}
		exact := map[string][]uint64{}
		loose := map[string][]uint64{}
		for _, f := range std.Table.Funcs {
			exact[f.Name] = append(exact[f.Name], f.Entry)
			k := WithoutTypeArgs(f.Name)
			loose[k] = append(loose[k], f.Entry)
		}
		same := 0
		check := func(name string, want []uint64) {
			var got []uint64
			for f, err := range tab.LookupFunctions(name) {
				if err != nil {
					t.Fatalf("LookupFunctions(%q): %v", name, err)
				}
				got = append(got, f.Entry())
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("LookupFunctions(%q) = %#x, debug/gosym has %#x", name, got, want)
			}
		}
		for name, want := range exact {
			if len(want) > 1 {
				same++
			}
			check(name, want)
			f, err := tab.LookupFunction(name)
			if err != nil || f.Entry() != slices.Min(want) {
				t.Errorf("LookupFunction(%q) = %#x, %v; want %#x", name, f.Entry(), err, slices.Min(want))
			}
		}
		generic := 0
		for key, want := range loose {
			if _, ok := exact[key]; !ok {
				generic++
				check(key, want)
			}
		}
		t.Logf("%d names, %d shared by several functions, %d generic names looked up without type arguments", len(exact), same, generic)
	})
}

func TestLookupFunctionsMissing(t *testing.T) {
	tab := selfTable(t)
	for _, name := range []string{"", "main.nosuch", "testing.(*T", "[", "runtime.main[x]"} {
		for f, err := range tab.LookupFunctions(name) {
			t.Errorf("LookupFunctions(%q) yields %v, %v", name, f.Name(), err)
		}
		if _, err := tab.LookupFunction(name); !errors.Is(err, ErrFunctionNotFound) {
			t.Errorf("LookupFunction(%q): %v, want ErrFunctionNotFound", name, err)
		}
	}
}

// TestNameIndexLongNames fills the function-name table of the newest fuzz
// base with names of about 4 KiB, each with type arguments, sharing long
// prefixes (r05's class: a damaged table whose names run long). Building
// the name index must allocate in proportion to the functions and the
// name table, not to the bytes of the names they point to,
// and LookupFunctions must find a function by its name, or report the
// damage (names that together run far beyond the name table: the index's
// work bound, TestLookupFunctionSharedName).
func TestNameIndexLongNames(t *testing.T) {
	m, tab, sec := newestBase(t)
	d := m.data[sec]
	names := sectionOffset(t, d, tab.hdr.names)
	n := len(tab.hdr.names)
	for i := range n {
		switch {
		case i%4096 == 4095:
			d[names+i] = 0
		default:
			d[names+i] = "a[b]"[i%4]
		}
	}
	d[names+n-1] = 0
	bad, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := bad.funcAt(uint64(bad.NumFunctions() / 2))
	if err != nil {
		t.Fatal(err)
	}
	name := f.Name()
	var found bool
	var lerr error
	allocated := alloctest.Bytes(func() {
		for g, err := range bad.LookupFunctions(name) {
			if err != nil {
				lerr = err
				break
			}
			found = found || g.Entry() == f.Entry()
		}
	})
	if lerr != nil && !errors.Is(lerr, ErrCorrupted) {
		t.Fatalf("LookupFunctions: %v, want a function or ErrCorrupted", lerr)
	}
	if !found && lerr == nil {
		t.Errorf("LookupFunctions(%d-byte name) does not find its function", len(name))
	}
	// The index's bound: 64 bytes a function, and the keys of names with
	// type arguments within its budget of names read (four times the
	// name table and 1 MiB).
	if limit := uint64(64*bad.NumFunctions()+64<<10) + 4*uint64(n) + 1<<20; allocated > limit {
		t.Errorf("the name index of %d functions allocates %d bytes, more than %d", bad.NumFunctions(), allocated, limit)
	}
	t.Logf("%d functions, names of up to 4 KiB: the index allocates %d bytes", bad.NumFunctions(), allocated)
}

// TestLookupVulnDBSpelling looks up pointer methods of the test binary as
// vulnerability databases spell them (SymbolName's form: no parentheses,
// no '*'): each must find the function SymbolName was made from.
func TestLookupVulnDBSpelling(t *testing.T) {
	tab := selfTable(t)
	checked := 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		n := ParseName(f.Name())
		if !n.Pointer || n.Package == "" || strings.ContainsAny(f.Name(), "%") || isClosurePart(n.Func) {
			continue
		}
		pkg, sym := SymbolName(f.Name())
		vuln := pkg + "." + sym
		// The method itself: f, or the value method f wraps.
		same := func(g Function) bool {
			p, s := SymbolName(g.Name())
			return p == pkg && WithoutTypeArgs(s) == WithoutTypeArgs(sym)
		}
		found := false
		for g, err := range tab.LookupFunctions(vuln) {
			if err != nil {
				t.Fatal(err)
			}
			found = found || same(g)
		}
		if !found {
			t.Fatalf("LookupFunctions(%q) does not find %s", vuln, f.Name())
		}
		if n.TypeArgs == "" {
			if g, err := tab.LookupFunction(vuln); err != nil || !same(g) {
				t.Fatalf("LookupFunction(%q) = %v, %v; want %s", vuln, g.Name(), err, f.Name())
			}
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("only %d pointer methods checked", checked)
	}
	if pointerMethod("main.F.func1") != "" || pointerMethod("main.(*T).M") != "" || pointerMethod("main.main") != "" {
		t.Error("pointerMethod rewrites a name that is no value-receiver spelling")
	}
	if got := pointerMethod("sync/atomic.Pointer[go.shape.int].Load"); got != "sync/atomic.(*Pointer[go.shape.int]).Load" {
		t.Errorf("pointerMethod = %q", got)
	}
	t.Logf("%d pointer methods found by their vulnerability-database names", checked)
}

// TestLookupFunctionInlinedOnly checks LookupFunction's error for the
// names of functions that DWARF records only as inlined subroutines (no
// concrete subprogram of their own) in every corpus binary with DWARF
// from Go 1.9 on (the first to record inlining): it matches
// ErrInlinedOnly and ErrFunctionNotFound, and names a function whose
// inline tree holds the name. Names DWARF has a subprogram for are found;
// a name nothing has is not reported as inlined.
func TestCorpusLookupFunctionInlinedOnly(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		if e.HasDWARF && testcorpus.MinorVersion(e.GoVersion) >= 9 {
			// Go 1.12 on records inlined subroutines in DWARF, and
			// every binary of the corpus has some only inlined.
			if n := checkInlinedOnly(t, tab, bin); n == 0 && testcorpus.MinorVersion(e.GoVersion) >= 12 {
				t.Errorf("DWARF has no function only inlined")
			}
		}
	})
}

func checkInlinedOnly(t *testing.T, tab *Table, bin []byte) int {
	d, err := oracle.NewDWARF(bin)
	if err != nil {
		t.Fatal(err)
	}
	physical := map[string]bool{}
	for _, f := range d.Functions() {
		physical[f.Name] = true
	}
	inlined := map[string]bool{}
	var frames []oracle.Frame
	for _, pc := range d.Boundaries() {
		frames, _ = d.Frames(pc, frames)
		for _, fr := range frames[:max(len(frames)-1, 0)] {
			// Go names have a package; C functions of a cgo binary
			// (inlined by the C compiler) are not in the pclntab.
			if !physical[fr.Function] && !strings.ContainsAny(fr.Function, "[") && strings.Contains(fr.Function, ".") {
				inlined[fr.Function] = true
			}
		}
	}
	if len(inlined) == 0 {
		return 0
	}
	var calls []InlinedCall
	for name := range inlined {
		_, err := tab.LookupFunction(name)
		if !errors.Is(err, ErrInlinedOnly) || !errors.Is(err, ErrFunctionNotFound) {
			t.Errorf("LookupFunction(%q) = %v; DWARF has it only inlined", name, err)
			continue
		}
		into := err.Error()[strings.Index(err.Error(), "(into ")+len("(into "):]
		into = into[:strings.Index(into, ", maybe")]
		f, err := tab.LookupFunction(into)
		if err == nil {
			calls, err = f.InlinedCalls(calls)
		}
		if err != nil || !slices.ContainsFunc(calls, func(c InlinedCall) bool { return c.Name == name }) {
			t.Errorf("LookupFunction(%q): inlined into %q, whose inline tree does not hold it (%v)", name, into, err)
		}
	}
	n := 0
	for name := range physical {
		if n++; n > 200 {
			break
		}
		if _, err := tab.LookupFunction(name); errors.Is(err, ErrInlinedOnly) {
			t.Errorf("LookupFunction(%q) = %v; DWARF has a subprogram for it", name, err)
		}
	}
	if _, err := tab.LookupFunction("main.nosuchfunction"); errors.Is(err, ErrInlinedOnly) || !errors.Is(err, ErrFunctionNotFound) {
		t.Errorf("LookupFunction of a name nothing has = %v", err)
	}
	t.Logf("%d names only inlined", len(inlined))
	return len(inlined)
}
