package gosym

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// cfiAgreementEnv names a file to which TestSPDeltaCFI writes its table
// of results (for TESTING.md).
const cfiAgreementEnv = "GOSYM_CFI_AGREEMENT"

// usesLR reports whether goarch keeps return addresses in a link register.
func usesLRArch(goarch string) bool {
	return goarch != "386" && goarch != "amd64"
}

// TestSPDeltaCFI compares SPDelta with the DWARF call frame information
// (.debug_frame, decoded by internal/oracle's own CFA interpreter) at
// every PC of every Go function the CFI describes, in every corpus binary
// that has it. The relation (cmd/link/internal/ld/dwarf.go, writeframes):
//
//   - 386, amd64: CFA = SP + SPDelta + pointer size, and the return
//     address is saved at CFA - pointer size;
//   - link-register architectures: CFA = SP + SPDelta; the return address
//     is still in the link register while SPDelta is 0, saved at
//     CFA - SPDelta (that is, at 0(SP)) once it is positive; a function
//     with the TOPFRAME flag (Go 1.17+) has no return address at all.
//
// Stripped twins must then give the same SPDelta, Kind, ArgsSize and
// SPWrite at every PC and function as their unstripped build.
func TestSPDeltaCFI(t *testing.T) {
	m, err := testcorpus.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]testcorpus.Entry{}
	for _, e := range m.Entries {
		byName[e.Name] = e
	}
	var mu sync.Mutex
	results := map[string]string{}
	t.Cleanup(func() { writeCFIAgreement(t, m.Entries, results) })
	for _, e := range m.Entries {
		var twin *testcorpus.Entry
		if e.Variant == "stripped" {
			w, ok := byName[strings.TrimSuffix(e.Name, ".stripped")]
			if !ok {
				continue
			}
			twin = &w
		} else if !e.HasDWARF {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			tab := mustTable(t, bin)
			var res string
			if twin != nil {
				twinBin, err := twin.Binary()
				if err != nil {
					t.Fatal(err)
				}
				res = compareFrameData(t, tab, mustTable(t, twinBin))
			} else {
				cfi, err := oracle.NewCFI(bin)
				if err != nil {
					t.Fatal(err)
				}
				res = checkCFI(t, tab, cfi, e.GOARCH, e.PtrSize, e.Minor())
			}
			mu.Lock()
			results[e.Name] = res
			mu.Unlock()
		})
	}
}

// checkCFI checks SPDelta against cfi at every PC of every FDE that starts
// at a Go function's entry, and returns a summary.
func checkCFI(t *testing.T, tab *Table, cfi *oracle.CFI, goarch string, ptrSize, minor int) string {
	lr := usesLRArch(goarch)
	var pcs, funcs, foreign, oldLR int
	var bad []string
	fail := func(format string, args ...any) {
		if len(bad) < 10 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	var cfaReg uint64
	for i := range cfi.FDEs {
		fde := &cfi.FDEs[i]
		f, err := tab.ResolveFunction(fde.Start)
		if err != nil || f.Entry() != fde.Start {
			foreign++ // C code of cgo binaries, described by the C compiler's CFI
			continue
		}
		funcs++
		if fde.End > f.End() {
			fail("%s: FDE [%#x, %#x) runs past the function's end %#x", f.Name(), fde.Start, fde.End, f.End())
			continue
		}
		// The linker writes "return address undefined" for TOPFRAME
		// functions, a flag of Go 1.17 on (KindTop by funcID before).
		top := f.flags()&flagTopFrame != 0
		for pc := fde.Start; pc < fde.End; pc++ {
			pcs++
			row, _, ok := cfi.Rule(pc)
			d, err := f.SPDelta(pc)
			if !ok || err != nil {
				fail("%s pc %#x: CFI row %v, SPDelta error %v", f.Name(), pc, ok, err)
				continue
			}
			if cfaReg == 0 {
				cfaReg = row.CFAReg
			}
			want := int64(d)
			if !lr {
				want += int64(ptrSize)
			}
			if row.CFAExpr || row.CFAReg != cfaReg || row.CFAOffset != want {
				fail("%s pc %#x (+%#x): CFA = r%d%+d, SPDelta %d", f.Name(), pc, pc-f.Entry(), row.CFAReg, row.CFAOffset, d)
				continue
			}
			ra := row.RA
			switch {
			case !lr:
				if ra.Kind != oracle.RAOffset || ra.Offset != -int64(ptrSize) {
					fail("%s pc %#x: return address rule %+v", f.Name(), pc, ra)
				}
			case ra.Kind == oracle.RAUndefined && f.Kind() == KindTop:
				// Go 1.16's linker already marks the functions its
				// assembler calls TOPFRAME (goexit), but records no flag.
			case top:
				if ra.Kind != oracle.RAUndefined {
					fail("%s pc %#x: top frame, return address rule %+v", f.Name(), pc, ra)
				}
			case ra.Kind == oracle.RAOffset && ra.Offset == 0 && minor < 8:
				// Go 1.5's linker gives the link register one rule for
				// every PC of every function, its CIE's "saved at
				// CFA+0" (writeframes in cmd/link/internal/ld/dwarf.go;
				// Go 1.8's has the same-value rule for the prologue and
				// CFA-SPDelta after it): right for no PC where the
				// function has a frame, whose LR is at 0(SP) = CFA-SPDelta.
				// The CFA rule, checked above, is right.
				oldLR++
			case d > 0:
				if ra.Kind != oracle.RAOffset || ra.Offset != -int64(d) {
					fail("%s pc %#x: SPDelta %d, return address rule %+v", f.Name(), pc, d, ra)
				}
			default:
				if ra.Kind != oracle.RASame && ra.Kind != oracle.RAUnset {
					fail("%s pc %#x: SPDelta 0, return address rule %+v", f.Name(), pc, ra)
				}
			}
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
	if funcs == 0 {
		t.Errorf("no FDE describes a Go function (%d FDEs)", len(cfi.FDEs))
	}
	if len(bad) > 0 {
		return fmt.Sprintf("FAILED (%d+)", len(bad))
	}
	t.Logf("%d functions, %d PCs agree (%d FDEs of other code)", funcs, pcs, foreign)
	if oldLR > 0 {
		return fmt.Sprintf("100%% of %d PCs (%d functions); at %d the return address rule is Go 1.5's CFA+0", pcs, funcs, oldLR)
	}
	return fmt.Sprintf("100%% of %d PCs (%d functions)", pcs, funcs)
}

// compareFrameData checks that got gives the frame data of want (its
// unstripped twin) at every PC of every function.
func compareFrameData(t *testing.T, got, want *Table) string {
	var pcs int
	var bad []string
	for wf, err := range want.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		gf, err := got.ResolveFunction(wf.Entry())
		if err != nil || gf.Entry() != wf.Entry() || gf.Name() != wf.Name() {
			bad = append(bad, fmt.Sprintf("%s: twin's function %s, %v", wf.Name(), gf.Name(), err))
			continue
		}
		if gf.Kind() != wf.Kind() || gf.ArgsSize() != wf.ArgsSize() || gf.SPWrite() != wf.SPWrite() {
			bad = append(bad, fmt.Sprintf("%s: kind, args, spwrite %v %d %v; twin %v %d %v", wf.Name(),
				gf.Kind(), gf.ArgsSize(), gf.SPWrite(), wf.Kind(), wf.ArgsSize(), wf.SPWrite()))
		}
		for pc := wf.Entry(); pc < wf.End(); pc++ {
			pcs++
			wd, werr := wf.SPDelta(pc)
			gd, gerr := gf.SPDelta(pc)
			if wd != gd || (werr == nil) != (gerr == nil) {
				bad = append(bad, fmt.Sprintf("%s pc %#x: SPDelta %d, %v; twin %d, %v", wf.Name(), pc, gd, gerr, wd, werr))
			}
		}
		if len(bad) > 10 {
			break
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
	if len(bad) > 0 {
		return "FAILED"
	}
	return fmt.Sprintf("twin: 100%% of %d PCs", pcs)
}

func writeCFIAgreement(t *testing.T, entries []testcorpus.Entry, results map[string]string) {
	name := os.Getenv(cfiAgreementEnv)
	if name == "" || t.Failed() {
		return
	}
	var b strings.Builder
	b.WriteString("| Go | target | variant | SPDelta vs DWARF CFA |\n|---|---|---|---|\n")
	sorted := append([]testcorpus.Entry(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Minor() < sorted[j].Minor() })
	for _, e := range sorted {
		if r, ok := results[e.Name]; ok {
			fmt.Fprintf(&b, "| %s | %s/%s | %s | %s |\n", strings.TrimPrefix(e.GoVersion, "go"), e.GOOS, e.GOARCH, e.Variant, r)
		}
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o666); err != nil {
		t.Error(err)
	}
}

// TestSPDeltaCFICross runs the DWARF CFA check of TestSPDeltaCFI over the
// installed toolchain's builds of every cross target (shared with
// TestCrossBuildOracles): every link-register architecture family the
// committed corpus has no DWARF for.
func TestSPDeltaCFICross(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, c := range crossTargets {
		if c.goos == "plan9" {
			continue // no DWARF
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := buildCorpusProgram(t, c.name, c.goos, c.goarch, c.flags, c.cgo)
			cfi, err := oracle.NewCFI(bin)
			if err != nil {
				t.Fatal(err)
			}
			ptr := 8
			switch c.goarch {
			case "386", "arm", "mips", "mipsle":
				ptr = 4
			}
			tab := mustTable(t, bin)
			checkCFI(t, tab, cfi, c.goarch, ptr, parseMinor(tab.GoVersion()))
		})
	}
}

// TestSPDeltaPadding checks SPDelta at the end of every function of the
// newest base (r11): the PCs after the function's code, up to the next
// entry, are padding, which gives ErrPadding, never a corrupt-table error,
// and only at the end; a function without a pcsp table (such as the
// linker's marker go:textfipsstart) gives ErrNoFrameData; a pcsp table
// whose varint is cut gives ErrCorrupted.
func TestSPDeltaPadding(t *testing.T) {
	m, tab, sec := newestBase(t)
	padded, noData := 0, 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if f.field(tab.layout.pcsp) == 0 {
			if _, err := f.SPDelta(f.Entry()); !errors.Is(err, ErrNoFrameData) {
				t.Errorf("%s without a pcsp table: SPDelta = %v, want ErrNoFrameData", f.Name(), err)
			}
			noData++
			continue
		}
		inPadding := false
		for pc := max(f.Entry(), f.End()-64); pc < f.End(); pc++ {
			_, err := f.SPDelta(pc)
			switch {
			case errors.Is(err, ErrPadding):
				inPadding = true
				padded++
			case err != nil:
				t.Fatalf("%s pc %#x: SPDelta: %v", f.Name(), pc, err)
			case inPadding:
				t.Fatalf("%s pc %#x: SPDelta answers after padding", f.Name(), pc)
			}
		}
	}
	if padded == 0 {
		t.Error("no padding found")
	}
	t.Logf("%d padding PCs, %d functions without frame data", padded, noData)

	f := functionOfSize(t, tab, 64, 1<<20)
	d := m.data[sec]
	at := sectionOffset(t, d, tab.hdr.pctab) + int(f.field(tab.layout.pcsp))
	copy(d[at:], bytes.Repeat([]byte{0x80}, 8)) // a varint longer than 32 bits
	bad, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	g, err := bad.ResolveFunction(f.Entry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.SPDelta(g.Entry()); !errors.Is(err, ErrCorrupted) || errors.Is(err, ErrPadding) {
		t.Errorf("SPDelta over a cut varint: %v, want ErrCorrupted", err)
	}
}
