package gosym

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestCorpusLinePCs compares LinePCs with DWARF's line table on every
// corpus binary that has DWARF. A copy of a line is the code that the
// line table attributes to it inside one function or inlined subroutine
// instance; LinePCs must find every copy of every line (one of its PCs
// lies in the copy's node), and its PC is compared with the copy's first
// row that has is_stmt set, the statement start a debugger stops at.
//
// It ends with the figures per release, written also to the file
// $GOSYM_LINEPCS_REPORT if set.
func TestCorpusLinePCs(t *testing.T) {
	var mu sync.Mutex
	byRelease := map[string]*linePCStats{}
	t.Cleanup(func() {
		var rs []string
		for r := range byRelease {
			rs = append(rs, r)
		}
		slices.SortFunc(rs, func(a, b string) int { return cmp.Compare(testcorpus.MinorVersion(a), testcorpus.MinorVersion(b)) })
		var total linePCStats
		var report strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&report, "%-10s %s\n", r, byRelease[r])
			total.add(*byRelease[r])
		}
		fmt.Fprintf(&report, "%-10s %s\n", "all", total)
		t.Log("LinePCs against DWARF, by release:\n" + report.String())
		if out := os.Getenv("GOSYM_LINEPCS_REPORT"); out != "" {
			if err := os.WriteFile(out, []byte(report.String()), 0o666); err != nil {
				t.Error(err)
			}
		}
	})
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		if !e.HasDWARF {
			return
		}
		d, err := oracle.NewDWARF(bin)
		if err != nil {
			t.Fatalf("DWARF oracle: %v", err)
		}
		s := compareLinePCs(t, tab, d)
		t.Logf("LinePCs: %s", s)
		mu.Lock()
		if byRelease[e.GoVersion] == nil {
			byRelease[e.GoVersion] = new(linePCStats)
		}
		byRelease[e.GoVersion].add(s)
		mu.Unlock()
		if s.missed > 0 {
			t.Errorf("%d of %d DWARF line copies not found", s.missed, s.copies)
		}
	})
}

// linePCStats counts the comparison of LinePCs with DWARF.
type linePCStats struct {
	copies, missed int // DWARF copies of lines in Go functions; those LinePCs did not find
	otherLine      int // copies where the pclntab has another line at DWARF's first PC
	stmt, sameStmt int // copies with an is_stmt row; those where LinePCs gives that PC
	extra          int // copies LinePCs reports and DWARF has not
	otherName      int // copies in a file the pclntab names otherwise
}

func (s *linePCStats) add(o linePCStats) {
	s.copies += o.copies
	s.missed += o.missed
	s.otherLine += o.otherLine
	s.stmt += o.stmt
	s.sameStmt += o.sameStmt
	s.extra += o.extra
	s.otherName += o.otherName
}

func (s linePCStats) String() string {
	return fmt.Sprintf("%d copies, %d not found, %d where the pclntab has another line; first is_stmt PC equal in %d of %d (%.1f%%); %d copies DWARF has not; %d in files the pclntab names otherwise",
		s.copies, s.missed, s.otherLine, s.sameStmt, s.stmt, 100*float64(s.sameStmt)/float64(max(s.stmt, 1)), s.extra, s.otherName)
}

// copyKey identifies a copy of a line in the pclntab: a physical
// function and the innermost inlined call in it (-1: its own code).
type copyKey struct {
	entry uint64
	call  int
	file  string
	line  uint32
}

// copies answers copyAt from each function's decoded lines.
type copies struct {
	tab   *Table
	lines map[uint64][]FunctionLine
}

// at returns the copy that holds pc, by the pclntab.
func (c *copies) at(pc uint64) (copyKey, bool) {
	f, err := c.tab.ResolveFunction(pc)
	if err != nil {
		return copyKey{}, false
	}
	ls, ok := c.lines[f.Entry()]
	if !ok {
		r, err := f.Lines(nil)
		if err != nil {
			return copyKey{}, false
		}
		ls = r
		c.lines[f.Entry()] = ls
	}
	for _, l := range ls {
		if l.PCLo <= pc && pc < l.PCHi {
			return copyKey{f.Entry(), l.Call, l.File, l.Line}, true
		}
	}
	return copyKey{}, false
}

func compareLinePCs(t *testing.T, tab *Table, d *oracle.DWARF) linePCStats {
	type fileLine struct {
		file string
		line int
	}
	byLine := map[fileLine][]oracle.LineCopy{}
	for _, c := range d.LineCopies() {
		if _, err := tab.ResolveFunction(c.Low); err != nil {
			continue // C code of a cgo binary: not in the pclntab
		}
		k := fileLine{c.File, c.Line}
		byLine[k] = append(byLine[k], c)
	}
	var s linePCStats
	var buf []LinePC
	var shown int
	cp := &copies{tab: tab, lines: map[uint64][]FunctionLine{}}
	agreed := map[string][]uint32{} // by file, the lines where a DWARF copy matched
	for k, dcopies := range byLine {
		var err error
		buf, err = tab.LinePCs(k.file, uint32(k.line), buf)
		if errors.Is(err, ErrFileNotFound) {
			// The pclntab names the file otherwise: before Go 1.10 the
			// cgo-generated files of an externally linked binary are
			// relative in the pclntab ("pkg/_obj/_cgo_gotypes.go") and
			// absolute in DWARF. Each copy must then be one the line
			// tables disagree on; one the pclntab gives this file would
			// be a miss.
			buf = buf[:0]
			s.otherName += len(dcopies)
		} else if err != nil {
			t.Fatalf("LinePCs(%s, %d): %v", k.file, k.line, err)
		}
		ours := map[copyKey]uint64{}
		for _, l := range buf {
			key, ok := cp.at(l.PC)
			if !ok || key.file != k.file || key.line != uint32(k.line) {
				t.Errorf("LinePCs(%s, %d) gives %#x, where the table has %s:%d", k.file, k.line, l.PC, key.file, key.line)
			}
			ours[key] = l.PC
		}
		matched := map[copyKey]bool{}
		for _, c := range dcopies {
			s.copies++
			key, ok := cp.at(c.Low)
			if !ok || key.file != k.file || key.line != uint32(k.line) {
				// The line tables disagree at the copy's first PC.
				s.otherLine++
				continue
			}
			pc, ok := ours[key]
			if !ok {
				s.missed++
				if shown++; shown <= 10 {
					t.Errorf("%s:%d: no PC in the copy at %#x (is_stmt %#x); LinePCs: %v", k.file, k.line, c.Low, c.Stmt, pcsOf(buf))
				}
				continue
			}
			matched[key] = true
			agreed[k.file] = append(agreed[k.file], uint32(k.line))
			if c.Stmt != 0 {
				s.stmt++
				if pc == c.Stmt {
					s.sameStmt++
				}
			}
		}
		s.extra += len(ours) - len(matched)
	}
	checkNextLine(t, tab, agreed)
	return s
}

// checkNextLine checks NextLine against the lines DWARF gives code in
// each file (those where the pclntab agrees): NextLine of such a line is
// the line itself; of the line after it, if DWARF has no code there, a
// line up to DWARF's next one (the pclntab may have code DWARF has not)
// that LinePCs finds PCs for.
func checkNextLine(t *testing.T, tab *Table, agreed map[string][]uint32) {
	var buf []LinePC
	for file, lines := range agreed {
		slices.Sort(lines)
		lines = slices.Compact(lines)
		for i, l := range lines {
			if n, err := tab.NextLine(file, l); n != l || err != nil {
				t.Errorf("NextLine(%s, %d) = %d, %v; DWARF has code at %d", file, l, n, err, l)
				continue
			}
			if i+1 < len(lines) && lines[i+1] == l+1 {
				continue
			}
			n, err := tab.NextLine(file, l+1)
			if err != nil || n != 0 && n <= l || i+1 < len(lines) && (n == 0 || n > lines[i+1]) {
				t.Errorf("NextLine(%s, %d) = %d, %v; DWARF's next line with code is %d", file, l+1, n, err, lines[min(i+1, len(lines)-1)])
				continue
			}
			if n == 0 {
				continue
			}
			if buf, err = tab.LinePCs(file, n, buf); err != nil || len(buf) == 0 {
				t.Errorf("NextLine(%s, %d) = %d, where LinePCs gives %d PCs, %v", file, l+1, n, len(buf), err)
			}
		}
	}
}

func pcsOf(l []LinePC) []string {
	var out []string
	for _, p := range l {
		out = append(out, fmt.Sprintf("%#x %s", p.PC, p.Function))
	}
	return out
}

// TestCorpusFiles compares Files with debug/gosym's file list (Table.Files)
// on every corpus binary it reads, and checks that every file a function's
// line table names is among them. debug/gosym misses the last file of a
// Go 1.2–1.7 table (README, "Why not debug/gosym?").
func TestCorpusFiles(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		got := map[string]bool{}
		last := ""
		for f := range tab.Files() {
			if got[f] {
				t.Errorf("Files yields %q twice", f)
			}
			got[f], last = true, f
		}
		x, err := tab.lineIndex()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range x.files {
			if !got[f] {
				t.Errorf("line tables name %q, which Files does not yield", f)
			}
		}
		std, err := oracle.NewStdlibPclntab(bin)
		if err != nil {
			return // the unstripped twin is checked
		}
		for f := range std.Table.Files {
			if !got[f] {
				t.Errorf("debug/gosym lists %q, which Files does not yield", f)
			}
		}
		for f := range got {
			if std.Table.Files[f] == nil && !(f == last && e.Minor() < 8) {
				t.Errorf("Files yields %q, which debug/gosym does not list", f)
			}
		}
	})
}

// TestLinePCsUnknownFile checks that a file the binary does not have is an
// error naming it, while a line without code in a file it has is not.
func TestLinePCsUnknownFile(t *testing.T) {
	_, tab, samples := newestInlined(t)
	locs, err := tab.ResolveLocations(samples[0].pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := locs[0].File
	for _, name := range []string{"no/such/file.go", file + "x", "x" + file} {
		pcs, err := tab.LinePCs(name, 1, nil)
		if !errors.Is(err, ErrFileNotFound) || !strings.Contains(err.Error(), name) || len(pcs) != 0 {
			t.Errorf("LinePCs(%q) = %v, %v; want ErrFileNotFound naming the file", name, pcs, err)
		}
		if n, err := tab.NextLine(name, 1); !errors.Is(err, ErrFileNotFound) || n != 0 {
			t.Errorf("NextLine(%q) = %d, %v; want ErrFileNotFound", name, n, err)
		}
	}
	for _, name := range []string{file, file[strings.LastIndexByte(file, '/')+1:]} {
		if pcs, err := tab.LinePCs(name, 1<<30, nil); err != nil || len(pcs) != 0 {
			t.Errorf("LinePCs(%q, a line without code) = %v, %v; want nothing", name, pcs, err)
		}
		if n, err := tab.NextLine(name, 1<<30); n != 0 || err != nil {
			t.Errorf("NextLine(%q, after the last line) = %d, %v; want 0, nil", name, n, err)
		}
	}
}
