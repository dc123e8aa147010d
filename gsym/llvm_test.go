package gsym

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/corpussample"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// gsymutilName is the LLVM tool the oracles run: its release 14, the one
// Debian and Ubuntu package as llvm-14 (.ci/run installs it).
const gsymutilName = "llvm-gsymutil-14"

// gsymutil returns the path of llvm-gsymutil-14. Without it the test is
// skipped, except with GOSYM_HEAVY=1, where it fails.
func gsymutil(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath(gsymutilName)
	if err != nil {
		if objtest.Heavy() {
			tb.Fatalf("%s is missing, and %s=1 requires it (Debian: apt-get install llvm-14)", gsymutilName, objtest.HeavyEnv)
		}
		tb.Skipf("%s is missing (Debian: apt-get install llvm-14)", gsymutilName)
	}
	return p
}

// llvmAnswer is llvm-gsymutil's answer at one address: frames, or an
// error message.
type llvmAnswer struct {
	frames []gosym.Location
	err    string
}

// llvmLookup looks addrs up in the GSYM file at path with llvm-gsymutil
// (--address, many at a time: --addresses-from-stdin opens the file again
// for every address), and returns its answers.
func llvmLookup(tb testing.TB, tool, path string, addrs []uint64) []llvmAnswer {
	tb.Helper()
	var out []byte
	for i := 0; i < len(addrs); i += 4000 {
		args := []string{path}
		for _, a := range addrs[i:min(i+4000, len(addrs))] {
			args = append(args, fmt.Sprintf("--address=%#x", a))
		}
		cmd := exec.Command(tool, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		o, err := cmd.Output()
		if err != nil {
			tb.Fatalf("%s %s --address=...: %v\n%s", tool, path, err, stderr.Bytes())
		}
		out = append(out, o...)
	}
	answers, err := parseLookups(out)
	if err != nil {
		tb.Fatalf("%s: %v", tool, err)
	}
	if len(answers) != len(addrs) {
		tb.Fatalf("%s answered %d of %d addresses", tool, len(answers), len(addrs))
	}
	for i, a := range answers {
		if a.addr != addrs[i] {
			tb.Fatalf("%s answer %d is for %#x, asked %#x", tool, i, a.addr, addrs[i])
		}
	}
	res := make([]llvmAnswer, len(answers))
	for i, a := range answers {
		res[i] = a.llvmAnswer
	}
	return res
}

type addrAnswer struct {
	addr uint64
	llvmAnswer
}

var (
	answerRE = regexp.MustCompile(`^0x([0-9a-f]+): (.*)$`)
	offsetRE = regexp.MustCompile(` \+ [0-9]+$`)
)

// parseLookups parses llvm-gsymutil's lookup output: for each address a
// line "0xADDR: FRAME" and a line of 20 spaces and a FRAME for each outer
// frame, where a FRAME is "NAME[ + OFFSET][ @ FILE:LINE][ [inlined]]";
// or "0xADDR: error: MESSAGE".
func parseLookups(out []byte) ([]addrAnswer, error) {
	var res []addrAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "Looking up addresses in") {
			continue
		}
		var frame string
		if m := answerRE.FindStringSubmatch(line); m != nil {
			addr, err := strconv.ParseUint(m[1], 16, 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %v", line, err)
			}
			res = append(res, addrAnswer{addr: addr})
			if msg, ok := strings.CutPrefix(m[2], "error: "); ok {
				res[len(res)-1].err = msg
				continue
			}
			frame = m[2]
		} else if strings.HasPrefix(line, "                    ") && len(res) > 0 {
			frame = strings.TrimLeft(line, " ")
		} else {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		frame = strings.TrimSuffix(frame, " [inlined]")
		var l gosym.Location
		if k := strings.LastIndex(frame, " @ "); k >= 0 {
			loc := frame[k+3:]
			frame = frame[:k]
			c := strings.LastIndexByte(loc, ':')
			if c < 0 {
				return nil, fmt.Errorf("location %q without line", loc)
			}
			n, err := strconv.ParseUint(loc[c+1:], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("location %q: %v", loc, err)
			}
			l.File, l.Line = loc[:c], uint32(n)
		}
		l.Function = offsetRE.ReplaceAllString(frame, "")
		a := &res[len(res)-1]
		a.frames = append(a.frames, l)
	}
	return res, sc.Err()
}

// llvmView is what llvm-gsymutil can show of frames: a frame with no file
// is printed without its line.
func llvmView(locs []gosym.Location) []gosym.Location {
	out := make([]gosym.Location, len(locs))
	for i, l := range locs {
		out[i] = gosym.Location{Function: l.Function, File: l.File, Line: l.Line}
		if l.File == "" {
			out[i].Line = 0
		}
	}
	return out
}

// oracleBinary is a binary the llvm-gsymutil oracles check.
type oracleBinary struct {
	name string
	tab  *gosym.Table
	path string // the binary on disk, for llvm-gsymutil --convert
}

// oracleBinaries returns the binaries of the llvm-gsymutil oracles: the
// test program built by the installed toolchain, with DWARF and without
// (objtest), and every corpus entry (with GOSYM_CORPUS_DIR, a sample of
// the full matrix that covers every release, target and variant:
// corpussample).
func oracleBinaries(t *testing.T) []oracleBinary {
	var bins []oracleBinary
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.LinuxStripped} {
		p := objtest.Path(t, tg)
		bins = append(bins, oracleBinary{"hello." + tg.Name, openTable(t, p), p})
	}
	entries := corpussample.Test(t)
	dir := t.TempDir()
	for _, e := range entries {
		tab, bin := entryTable(t, e)
		p := filepath.Join(dir, e.Name)
		if err := os.WriteFile(p, bin, 0o666); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, oracleBinary{e.Name, tab, p})
	}
	return bins
}

// TestLLVMReadsOurFile looks up, with llvm-gsymutil-14, every function
// entry and about 3000 more PCs of each oracle binary in the file Write
// makes for it: the frames must be ResolveLocations' (functions of the
// whole inline stack, files, lines; a frame without a file shows no
// line).
func TestLLVMReadsOurFile(t *testing.T) {
	tool := gsymutil(t)
	dir := t.TempDir()
	total, totalFrames := 0, 0
	for _, b := range oracleBinaries(t) {
		path := filepath.Join(dir, b.name+".gsym")
		if err := os.WriteFile(path, writeBytes(t, b.tab), 0o666); err != nil {
			t.Fatal(err)
		}
		pcs := samplePCs(functions(t, b.tab), 3000)
		answers := llvmLookup(t, tool, path, pcs)
		bad := 0
		var want []gosym.Location
		for i, pc := range pcs {
			var err error
			if want, err = b.tab.ResolveLocations(pc, want); err != nil {
				t.Fatalf("%s: %#x: %v", b.name, pc, err)
			}
			totalFrames += len(want)
			a := answers[i]
			if a.err != "" || !sameFrames(a.frames, llvmView(want)) {
				if bad++; bad <= 5 {
					t.Errorf("%s: %#x: llvm-gsymutil: %v %s\n want %v", b.name, pc, a.frames, a.err, want)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d PCs disagree", b.name, bad, len(pcs))
		}
		total += len(pcs)
	}
	t.Logf("%d PCs, %d frames: llvm-gsymutil-14 reads ResolveLocations' frames", total, totalFrames)
}

// diffKind classifies how llvm-gsymutil's answer from the DWARF of a
// binary (its --convert) differs from ResolveLocations at one PC, saying
// whose the difference is.
func diffKind(got llvmAnswer, want []gosym.Location, padding bool) string {
	outer := want[len(want)-1]
	switch {
	case got.err != "" && padding:
		return "padding after a function: DWARF's ranges end at the last instruction, the pclntab's at the next function"
	case got.err != "":
		return "llvm-gsymutil error: " + errorClass(got.err)
	case len(got.frames) == 1 && got.frames[0].File == "" && outer.File == "<autogenerated>" && got.frames[0].Function == outer.Function:
		return "compiler-generated wrapper: Go's DWARF has no lines or inlined calls for it"
	case len(got.frames) == 1 && len(want) > 1 && outer.File == "<autogenerated>" && got.frames[0].Function == outer.Function:
		return "compiler-generated wrapper: Go's DWARF has the lines of the method inlined into it, not the inlined call"
	case len(got.frames) != len(want):
		return fmt.Sprintf("inline depth %d, pclntab's %d", len(got.frames), len(want))
	}
	var kinds []string
	for i, w := range want {
		g := got.frames[i]
		switch {
		case g.Function == w.Function:
		case strings.Contains(w.Function, "[...]"):
			kinds = append(kinds, "name: DWARF spells type arguments and array lengths out, the pclntab stores [...]")
		default:
			kinds = append(kinds, "function name")
		}
		switch {
		case g.File == w.File:
		case strings.TrimLeft(g.File, "./") == w.File:
			kinds = append(kinds, "file: DWARF's <autogenerated> is joined to its directory \".\"")
		default:
			kinds = append(kinds, "file")
		}
		switch {
		case g.Line == w.Line:
		case w.File == "<autogenerated>" && g.File != w.File:
			// Part of the file difference.
		case i == 0:
			kinds = append(kinds, "line of the innermost frame")
		default:
			kinds = append(kinds, "line of a call site")
		}
	}
	return strings.Join(uniq(kinds), "; ")
}

func uniq(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// errorClass is an error message of llvm-gsymutil without its address.
func errorClass(msg string) string {
	return regexp.MustCompile(`0x[0-9a-f]+`).ReplaceAllString(msg, "ADDR")
}

// TestLLVMConvertDWARF compares, at the PCs of TestLLVMReadsOurFile, the
// answers of llvm-gsymutil-14 from the file it converts from a binary's
// DWARF (ELF binaries with DWARF: the test program and the corpus's
// linux default builds) with ResolveLocations', and counts each kind of
// difference (TESTING.md, "GSYM export", records them). It also checks
// that Reader reads llvm-gsymutil's file as llvm-gsymutil does: the same
// frames, or an error where it gives one.
func TestLLVMConvertDWARF(t *testing.T) {
	tool := gsymutil(t)
	dir := t.TempDir()
	kinds := map[string]int{}
	total, converted, failed := 0, 0, 0
	for _, b := range oracleBinaries(t) {
		data, err := os.ReadFile(b.path)
		if err != nil {
			t.Fatal(err)
		}
		if hasDWARF, _ := testcorpus.HasDWARF(data); !hasDWARF || testcorpus.Format(data) != "elf" {
			continue
		}
		out := filepath.Join(dir, b.name+".llvm.gsym")
		cmd := exec.Command(tool, "--convert", b.path, "--out-file", out, "--num-threads=1", "--quiet")
		if msg, err := cmd.CombinedOutput(); err != nil {
			// LLVM 14 rejects the DWARF of some releases (Go 1.11
			// and 1.12: "child range not contained in parent").
			t.Logf("%s: %s --convert fails: %v: %s", b.name, tool, err, bytes.TrimSpace(msg))
			failed++
			continue
		}
		converted++
		fns := functions(t, b.tab)
		pcs := samplePCs(fns, 3000)
		answers := llvmLookup(t, tool, out, pcs)
		llvmData, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		r := newReader(t, llvmData)
		var want, got []gosym.Location
		mine := map[string]int{}
		readerBad := 0
		for i, pc := range pcs {
			if want, err = b.tab.ResolveLocations(pc, want); err != nil {
				t.Fatal(err)
			}
			a := answers[i]
			if got, err = r.Lookup(pc, got); (err != nil) != (a.err != "") || err == nil && !sameFrames(llvmView(got), a.frames) {
				if readerBad++; readerBad <= 5 {
					t.Errorf("%s: %#x: Reader on llvm-gsymutil's file: %v %v\n llvm-gsymutil: %v %s", b.name, pc, got, err, a.frames, a.err)
				}
			}
			padding := len(want) == 1 && want[0].File == "" && want[0].Line == 0
			if a.err == "" && sameFrames(a.frames, llvmView(want)) {
				continue
			}
			k := diffKind(a, want, padding)
			if mine[k]++; mine[k] <= 2 && testing.Verbose() {
				t.Logf("%s: %#x: %s:\n llvm-gsymutil: %v %s\n pclntab: %v", b.name, pc, k, a.frames, a.err, want)
			}
		}
		total += len(pcs)
		for k, n := range mine {
			kinds[k] += n
		}
		t.Logf("%s: %d PCs, differences: %v", b.name, len(pcs), mine)
	}
	if converted == 0 {
		t.Fatal("no binary with DWARF converted")
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var sum []string
	for _, k := range ks {
		sum = append(sum, fmt.Sprintf("%s: %d", k, kinds[k]))
	}
	t.Logf("%d binaries (%d more llvm-gsymutil cannot convert), %d PCs; llvm-gsymutil --convert (DWARF) differs from ResolveLocations at: %s", converted, failed, total, strings.Join(sum, "; "))
}
