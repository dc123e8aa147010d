package gosym

import (
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestCorpus is the differential suite: it compares every binary of the
// corpus (testdata/corpus, or $GOSYM_CORPUS_DIR) with every oracle that
// applies to it, one subtest per oracle:
//
//   - selfreport: every PC the binary's own runtime was asked about
//     (linux/amd64 and linux/386, all variants but stripped twins);
//   - dwarf: the inline stack at every DWARF boundary (binaries with DWARF);
//   - stdlib: debug/gosym's function list, and its function and innermost
//     position at every PC (at every DWARF boundary where the self-report
//     checks every PC); for stripped PE and Plan 9 files, which it cannot
//     read, debug/gosym reads the unstripped twin;
//   - twin: a stripped binary answers exactly like its unstripped twin at
//     every PC, GoVersion included;
//   - noshdr: an ELF binary without section headers answers exactly like
//     the original at every PC.
//
// With GOSYM_AGREEMENT set to a file name it writes the agreement table
// (see TESTING.md) there when all entries are done.
func TestCorpus(t *testing.T) {
	m, err := testcorpus.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]testcorpus.Entry{}
	for _, e := range m.Entries {
		byName[e.Name] = e
	}
	rows := newAgreementTable(m)
	t.Cleanup(func() { rows.finish(t) })
	for _, e := range m.Entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			row := rows.row(e.Name)
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			tab := mustTable(t, bin)
			checkGoVersion(t, e, tab)
			checkGuessMinor(t, e, tab)
			var twin *testcorpus.Entry
			if e.Variant == "stripped" {
				if w, ok := byName[strings.TrimSuffix(e.Name, ".stripped")]; ok {
					twin = &w
				}
			}
			var twinBin []byte
			if twin != nil {
				if twinBin, err = twin.Binary(); err != nil {
					t.Fatal(err)
				}
			}
			if e.SelfReportFile != "" {
				t.Run("selfreport", func(t *testing.T) {
					rep, err := e.SelfReport()
					if err != nil {
						t.Fatal(err)
					}
					row.set(oracleSelf, compareSelfReport(t, tab, rep, e.Minor()))
				})
			}
			std, err := oracle.NewStdlibPclntab(bin)
			viaTwin := false
			if err != nil && twin != nil {
				// debug/gosym needs the runtime.pclntab symbol to find the
				// table in PE and Plan 9 files, and -s removes it. The
				// unstripped twin has the same table at the same
				// addresses (the twin check below verifies that we answer
				// alike): ask debug/gosym about the twin's.
				std, err = oracle.NewStdlibPclntab(twinBin)
				viaTwin = true
			}
			if err != nil {
				t.Fatalf("debug/gosym: %v", err)
			}
			// The PCs where debug/gosym is asked: every PC, or, where the
			// self-report already checks every PC, DWARF's boundaries
			// (positions change only there).
			var pcs []uint64
			if e.HasDWARF {
				t.Run("dwarf", func(t *testing.T) {
					d, err := oracle.NewDWARF(bin)
					if err != nil {
						t.Fatalf("DWARF oracle: %v", err)
					}
					if e.SelfReportFile != "" {
						pcs = d.Boundaries()
					}
					a := compareDWARF(t, tab, d, std, e.Minor())
					a.report(t, "DWARF")
					row.set(oracleDWARF, a)
				})
			}
			t.Run("stdlib", func(t *testing.T) {
				a := compareStdlib(t, tab, std, pcs)
				a.viaTwin = viaTwin
				a.report(t, "debug/gosym")
				row.set(oracleStdlib, a)
			})
			if twin != nil {
				t.Run("twin", func(t *testing.T) {
					row.set(oracleTwin, compareTables(t, tab, mustTable(t, twinBin)))
				})
			}
			if testcorpus.Format(bin) == "elf" {
				t.Run("noshdr", func(t *testing.T) {
					got := mustTable(t, objtest.StripSectionHeaders(t, bin))
					in := got.Info()
					t.Logf("pclntab: %s; moduledata: %s", in.FoundBy, in.ModuledataFoundBy)
					row.set(oracleNoShdr, compareTables(t, got, tab))
				})
			}
		})
	}
}

// checkGoVersion compares GoVersion with the release that built the
// binary. Releases before 1.13 have no build info; the version is then
// read from runtime.buildVersion, found through the symbol table or, in
// stripped binaries, by a scan.
func checkGoVersion(t *testing.T, e testcorpus.Entry, tab *Table) {
	t.Helper()
	if got := tab.GoVersion(); got != e.GoVersion {
		t.Errorf("GoVersion = %q, want %q", got, e.GoVersion)
	}
}

// checkGuessMinor checks the guess of the record family that a table of
// magic 0xfffffffb gets when its release is not recorded: family A
// (1.2–1.11) or B (1.12–1.15).
func checkGuessMinor(t *testing.T, e testcorpus.Entry, tab *Table) {
	t.Helper()
	if tab.hdr.magic != magic12 || tab.hdr.nfunc < 64 {
		return
	}
	if got, want := tab.guessMinor() >= 12, e.Minor() >= 12; got != want {
		t.Errorf("guessMinor = %d for a table of Go 1.%d", tab.guessMinor(), e.Minor())
	}
}

// compareSelfReport compares every PC the binary asked its own runtime
// about with ResolveLocations, following each release's reporting method
// (testdata/corpus/README.md).
func compareSelfReport(t *testing.T, tab *Table, rep *testcorpus.Report, minor int) *agreement {
	var a, tree agreement
	var locs []Location
	var got, want []string
	var err error
	var frames treeFrames
	nframes := 0
	for i, rec := range rep.Records {
		if rec.Gap || len(rec.Frames) == 0 {
			continue
		}
		end := rep.End
		if i+1 < len(rep.Records) {
			end = rep.Records[i+1].PC
		}
		want = want[:0]
		for _, fr := range rec.Frames {
			want = append(want, frameString(fr.Function, fr.File, uint32(fr.Line)))
		}
		for pc := rec.PC; pc < end; pc++ {
			locs, err = tab.ResolveLocations(pc, locs)
			if err != nil {
				a.add(false, "pc %#x: %v, runtime %q", pc, err, want)
			} else {
				got = reportFrames(got[:0], locs, rep.Method, minor)
				matchEmptyNames(got, want)
				nframes += len(want)
				a.add(slices.Equal(got, want), "pc %#x:\n got  %q\n want %q", pc, got, want)
			}
			// The same frames built from the inline tree (InlinedCalls,
			// FunctionLine.Call) instead of ResolveLocations.
			if locs, err = frames.at(tab, pc, locs); err != nil {
				tree.add(false, "pc %#x: inline tree: %v, runtime %q", pc, err, want)
				continue
			}
			got = reportFrames(got[:0], locs, rep.Method, minor)
			matchEmptyNames(got, want)
			tree.add(slices.Equal(got, want), "pc %#x: from the inline tree:\n got  %q\n want %q", pc, got, want)
		}
	}
	if a.checked < 1000 {
		t.Errorf("only %d PCs checked", a.checked)
	}
	a.report(t, "runtime self-report")
	tree.report(t, "runtime self-report, frames from the inline tree")
	t.Logf("%s: %d PCs, %d frames", rep.Method, a.checked, nframes)
	return &a
}

// reportFrames formats locs as the runtime of release 1.minor reported
// them with the given method.
func reportFrames(dst []string, locs []Location, method string, minor int) []string {
	name := func(l Location) string {
		if minor >= 21 {
			return printName(l.Function)
		}
		return l.Function
	}
	in := locs[0]
	switch method {
	case testcorpus.MethodFuncForPC, testcorpus.MethodPhysical:
		// The physical function's name, the innermost position.
		out := locs[len(locs)-1]
		return append(dst, frameString(name(out), in.File, in.Line))
	case testcorpus.MethodInnermost:
		return append(dst, frameString(name(in), in.File, in.Line))
	}
	if minor >= 23 {
		return visibleFrames(dst, locs)
	}
	// Go 1.9–1.11 expand inline frames in CallersFrames; 1.10 and 1.11
	// hide frames in <autogenerated> code unless called from a panic.
	last := ""
	for i, l := range locs {
		if minor >= 10 && i > 0 && l.File == "<autogenerated>" && !panicFunc(last) {
			continue
		}
		last = l.Function
		dst = append(dst, frameString(name(l), l.File, l.Line))
	}
	return dst
}

// matchEmptyNames blanks our function names where the runtime reported
// none: it reads name offset 0, where the first function's name is stored
// since Go 1.16, as no name.
func matchEmptyNames(got, want []string) {
	for i := range min(len(got), len(want)) {
		if strings.HasPrefix(want[i], " ") {
			got[i] = got[i][strings.IndexByte(got[i], ' '):]
		}
	}
}
