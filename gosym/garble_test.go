package gosym

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/garbletest"
	"github.com/gosym-dev/gosym/internal/hostrun"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"golang.org/x/arch/x86/x86asm"
)

// garbleModes are the garble builds TestGarble checks: every obfuscation
// mode, fixed seeds and random ones, with and without -ldflags=-s -w.
var garbleModes = []struct {
	name   string
	garble []string
	strip  bool
}{
	{"default", nil, false},
	{"default-s-w", nil, true},
	{"literals-seedA", []string{"-literals", "-seed=o7Xbnb5tS8uGpZtE4kgmyQ"}, false},
	{"literals-s-w", []string{"-literals"}, true},
	{"tiny", []string{"-tiny"}, false},
	{"tiny-seedB-s-w", []string{"-tiny", "-seed=G4pOTPl7nB7kXo0hzlGHXg"}, true},
	{"seedrandom", []string{"-seed=random"}, false},
	{"all-random-s-w", []string{"-literals", "-tiny", "-seed=random"}, true},
}

// TestGarble reads binaries built by garble v0.18.0 (Go 1.27.3) from the
// corpus's test program (testdata/src/gopath/src/gosymtest) in every
// mode, and compares the table with the garbled program's own
// runtime.CallersFrames self-report at every PC it reports: its
// obfuscated names, files and lines, every inlined frame. Info must say
// what was repaired: the unknown magic and garble's entry key.
func TestGarble(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	env := garbletest.Setup(t)
	src := garbletest.CopyModule(t, filepath.Join(testcorpus.Dir(), "..", "src", "gopath", "src", "gosymtest"), "gosymtest")
	for _, m := range garbleModes {
		t.Run(m.name, func(t *testing.T) {
			checkGarbleMode(t, env, src, m.garble, m.strip, 27)
		})
	}
}

// garbleReleasesEnv, set to "all", makes TestGarbleReleases build every
// mode of garbleModes with each older garble release, not only
// garbleReleaseModes, and a linux/386 build; set to garble versions
// separated by spaces ("v0.15.0"), it limits the default builds to those
// releases.
const garbleReleasesEnv = "GOSYM_GARBLE_RELEASES"

// garbleReleaseModes are the modes of garbleModes TestGarbleReleases
// builds with each older garble release by default (garble rebuilds the
// standard library once per seed and flags, 15–80 s each here): two for
// v0.15.0, the one whose Go 1.25 header needs the padded layout, one
// (-tiny, the quickest to build) for the others, whose Go 1.26 header is
// v0.18.0's.
var garbleReleaseModes = map[string][]string{
	"v0.15.0": {"literals-seedA", "tiny-seedB-s-w"},
	"v0.16.0": {"tiny-seedB-s-w"},
	"v0.17.0": {"tiny-seedB-s-w"},
}

// TestGarbleReleases is TestGarble for the garble releases before v0.18.0
// that the module proxy serves (garbletest.Releases), each built with the
// Go release it needs: v0.15.0 with Go 1.25, whose pclntab has the
// 1.18–1.25 layout (the name table after zero padding, at 0x60), v0.16.0
// and v0.17.0 with Go 1.26. Each build is compared with its own
// runtime.CallersFrames self-report at every PC; Info must name the
// repaired magic and key, the key must be the one the patched runtime's
// code multiplies by (checkKeyInCode) and the wrapper funcID the
// toolchain's (checkWrapperID). One or two modes per release
// (garbleReleaseModes) unless GOSYM_GARBLE_RELEASES=all asks for all of
// garbleModes and a linux/386 build (fixed seed), run natively or under
// qemu-i386 (internal/hostrun), whose Go 1.25 header is padded to 0x40.
func TestGarbleReleases(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	sel := os.Getenv(garbleReleasesEnv)
	all := sel == "all"
	for _, r := range garbletest.Releases {
		if r.Garble == garbletest.GarbleVersion {
			continue // TestGarble's
		}
		if sel != "" && !all && !slices.Contains(strings.Fields(sel), r.Garble) {
			continue
		}
		t.Run(r.Garble, func(t *testing.T) {
			env := garbletest.SetupVersion(t, r.Garble, r.Go)
			minor := goMinor(t, r.Go)
			src := env.CopyModule(t, filepath.Join(testcorpus.Dir(), "..", "src", "gopath", "src", "gosymtest"), "gosymtest")
			for _, m := range garbleModes {
				if !all && !slices.Contains(garbleReleaseModes[r.Garble], m.name) {
					continue
				}
				t.Run(m.name, func(t *testing.T) {
					tab, a := checkGarbleMode(t, env, src, m.garble, m.strip, minor)
					in := tab.Info()
					t.Logf("garble %s (%s) %s: magic %#x, key %#x, %d PCs agree with the self-report", r.Garble, r.Go, m.name, in.Magic, in.EntryKey, a.checked)
				})
			}
			if !all {
				return
			}
			// 32-bit: Go 1.18–1.25 pad a 0x28-byte header to 0x40.
			t.Run("linux-386", func(t *testing.T) {
				bin := env.BuildFor(t, "linux", "386", src, []string{garbleSeed}, nil)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				cmd, err := hostrun.Command(ctx, "386", bin, "-selfreport")
				if err != nil {
					t.Skip(err)
				}
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s -selfreport: %v", bin, err)
				}
				tab, a := checkGarbled(t, env, bin, out, minor)
				t.Logf("garble %s (%s) linux/386: name table at %#x, %d PCs agree with the self-report", r.Garble, r.Go, cap(tab.data)-cap(tab.hdr.names), a.checked)
			})
		})
	}
}

// checkKeyInCode checks the entry key Info reports against a second
// witness, garble's patched runtime (garble#641: "a tool just has to pull
// the xor number from the runtime"): garble rewrites funcInfo.entry to
// textAddr(entryOff ^ uint32(nameOff)*key), which the compiler inlines
// into the runtime's callers as an IMUL of a 32-bit register by the key
// as an immediate, whose product an XOR then uses. The immediate of the
// most such IMULs in the runtime's code (amd64 or 386; the functions
// named runtime.*, or every function where -tiny left runtime functions
// unnamed) must be the key the library recovered from the records.
func checkKeyInCode(t *testing.T, tab *Table) {
	t.Helper()
	votes := map[uint32]int{}
	scan := func(runtimeOnly bool) {
		for f, err := range tab.Functions() {
			if err != nil {
				t.Fatal(err)
			}
			if runtimeOnly && !strings.HasPrefix(f.Name(), "runtime.") {
				continue
			}
			code, err := f.Code()
			if err != nil {
				continue
			}
			var insts []x86asm.Inst
			for len(code) > 0 {
				inst, err := x86asm.Decode(code, 8*tab.hdr.rd.ptrSize)
				if err != nil {
					code = code[1:]
					continue
				}
				insts = append(insts, inst)
				code = code[inst.Len:]
			}
			for i, inst := range insts {
				imm, ok := inst.Args[2].(x86asm.Imm)
				dst, isReg := inst.Args[0].(x86asm.Reg)
				if inst.Op != x86asm.IMUL || !ok || !isReg || dst < x86asm.EAX || dst > x86asm.R15L {
					continue
				}
				for _, next := range insts[i+1 : min(i+6, len(insts))] {
					if next.Op == x86asm.XOR && (next.Args[0] == dst || next.Args[1] == dst) {
						votes[uint32(imm)]++
						break
					}
				}
			}
		}
	}
	scan(true)
	if len(votes) == 0 {
		scan(false)
	}
	var key uint32
	best, second := 0, 0
	for k, n := range votes {
		if n > best || n == best && k < key {
			key, best = k, n
		}
	}
	for k, n := range votes {
		if k != key && n > second {
			second = n
		}
	}
	want := tab.Info().EntryKey
	t.Logf("the runtime's code multiplies by %#x before an XOR %d times (the next most frequent immediate: %d times); the records' key is %#x", key, best, second, want)
	if key != want || best <= second {
		t.Errorf("the patched runtime's key is %#x (%d IMULs, next %d); the library recovered %#x from the records", key, best, second, want)
	}
}

// checkWrapperID checks the wrapper funcID the table uses against the
// toolchain's own list (internal/abi.FuncIDWrapper's place in goroot's
// source): garbled binaries name no release, and -tiny renames
// runtime.deferreturn, from which it is learned otherwise.
func checkWrapperID(t *testing.T, tab *Table, goroot string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(goroot, "src", "internal", "abi", "symtab.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok1 := strings.Cut(string(src), "FuncIDNormal FuncID = iota")
	list, _, ok2 := strings.Cut(list, "FuncIDWrapper")
	if !ok1 || !ok2 {
		t.Fatalf("no FuncIDWrapper in %s's internal/abi", goroot)
	}
	want := uint32(strings.Count(list, "\n\tFuncID_") + 1)
	if got := tab.wrapperID(); got != want {
		t.Errorf("wrapper funcID %d; the toolchain's FuncIDWrapper is %d", got, want)
	}
}

// goMinor returns the minor release of a toolchain version: 25 for
// "go1.25.14".
func goMinor(t *testing.T, v string) int {
	t.Helper()
	var minor int
	if _, err := fmt.Sscanf(v, "go1.%d", &minor); err != nil {
		t.Fatalf("toolchain version %q: %v", v, err)
	}
	return minor
}

// checkGarbleInfo checks what Info says of a garbled table: an unknown
// magic read as the Go 1.20 layout, and the entry key undone.
func checkGarbleInfo(t *testing.T, tab *Table) {
	t.Helper()
	in := tab.Info()
	if _, _, ok := parseMagic(tab.data); ok {
		t.Errorf("magic %#x is a known one: not a garbled table?", in.Magic)
	}
	if in.Version != "1.20" || in.EntryKey == 0 {
		t.Errorf("Info: version %q, entry key %#x; want 1.20 and a key", in.Version, in.EntryKey)
	}
	if !strings.Contains(in.Repairs, "unknown magic") || !strings.Contains(in.Repairs, "garble") {
		t.Errorf("Info.Repairs = %q; want the magic and the key", in.Repairs)
	}
}

// garbleSeed is the fixed seed of the garble builds for other targets and
// of the garble reverse check.
const garbleSeed = "-seed=o7Xbnb5tS8uGpZtE4kgmyQ"

// garbledProgram copies the corpus's test program to a module of its own
// for garble.
func garbledProgram(t *testing.T) string {
	return garbletest.CopyModule(t, filepath.Join(testcorpus.Dir(), "..", "src", "gopath", "src", "gosymtest"), "gosymtest")
}

// TestGarbleTargets reads garble builds (fixed seed) for other targets
// than linux/amd64. linux/arm64 and linux/386 run here (natively or under
// qemu-user, internal/hostrun) and are checked as TestGarble checks: every
// PC as the garbled program's own runtime.CallersFrames self-report says.
// windows/amd64 cannot run here: its table must be found (by the scan:
// garble's magic is unknown, and PE has no .gopclntab section) and
// repaired with the magic and key of the linux/amd64 build of the same
// seed, and every function of the program's own packages that both builds
// have (garble's names depend on the seed, not the target) must have the
// same lines, relative to its entry, and the same inlined calls.
func TestGarbleTargets(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	env := garbletest.Setup(t)
	src := garbledProgram(t)
	for _, goarch := range []string{"arm64", "386"} {
		t.Run("linux-"+goarch, func(t *testing.T) {
			bin := env.BuildFor(t, "linux", goarch, src, []string{garbleSeed}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd, err := hostrun.Command(ctx, goarch, bin, "-selfreport")
			if err != nil {
				t.Skip(err)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s -selfreport: %v", bin, err)
			}
			tab, rep := openGarbled(t, bin, out)
			a := compareSelfReport(t, tab, rep, 27)
			if a.unexplained() > 0 {
				t.Errorf("%d of %d PCs disagree with the self-report", a.unexplained(), a.checked)
			}
			t.Logf("%d PCs agree with the self-report", a.checked)
		})
	}
	t.Run("windows-amd64", func(t *testing.T) {
		win, err := Open(env.BuildFor(t, "windows", "amd64", src, []string{garbleSeed}, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer win.Close()
		lin, err := Open(env.BuildFor(t, "linux", "amd64", src, []string{garbleSeed}, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer lin.Close()
		in := win.Info()
		t.Logf("info: %v, found by %q, repairs %q", in, in.FoundBy, in.Repairs)
		checkGarbleInfo(t, win)
		if !strings.HasPrefix(in.FoundBy, "scan of") {
			t.Errorf("found by %q; want the scan", in.FoundBy)
		}
		if lm, wm := lin.Info().Magic, in.Magic; lm != wm || lin.Info().EntryKey != in.EntryKey {
			t.Errorf("magic and key %#x, %#x; linux/amd64 with the same seed: %#x, %#x", wm, in.EntryKey, lm, lin.Info().EntryKey)
		}
		// The functions of the program's own packages but main (whose
		// files differ by GOOS): garble obfuscates the paths of these
		// packages, not the standard library's, and both builds compile
		// the same source for the same architecture.
		std := env.StdPackages(t, "windows", "amd64")
		same, shared, mainSame, mainDiffer := 0, 0, 0, 0
		linFuncs := uniqueFuncs(t, lin)
		for name, wf := range uniqueFuncs(t, win) {
			lf, ok := linFuncs[name]
			if !ok {
				continue
			}
			shared++
			pkg, _ := SymbolName(name)
			if pkg == "" || std[pkg] || strings.Contains(name, ":") {
				continue
			}
			w, l := relativeLines(t, wf), relativeLines(t, lf)
			switch {
			case pkg == "main" && slices.Equal(w, l):
				mainSame++
			case pkg == "main":
				mainDiffer++
			case slices.Equal(w, l):
				same++
			default:
				t.Errorf("%s: windows lines %q, linux %q", name, w, l)
			}
		}
		t.Logf("%d functions of %d are in both builds by name; %d of the program's packages but main have the same lines and inlined calls; of package main's, %d the same, %d not", shared, len(linFuncs), same, mainSame, mainDiffer)
		if same < 10 {
			t.Errorf("only %d functions of the program's own packages compared", same)
		}
	})
}

// uniqueFuncs returns the table's functions by name, leaving out names
// that more than one function has.
func uniqueFuncs(t *testing.T, tab *Table) map[string]Function {
	t.Helper()
	m, dup := map[string]Function{}, map[string]bool{}
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m[f.Name()]; ok {
			dup[f.Name()] = true
		}
		m[f.Name()] = f
	}
	for name := range dup {
		delete(m, name)
	}
	return m
}

// relativeLines returns f's lines with PCs relative to its entry, and its
// inlined calls, as strings.
func relativeLines(t *testing.T, f Function) []string {
	t.Helper()
	lines, err := f.Lines(nil)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, l := range lines {
		s = append(s, fmt.Sprintf("%#x-%#x %s %s:%d %d", l.PCLo-f.Entry(), l.PCHi-f.Entry(), l.Function, l.File, l.Line, l.Call))
	}
	calls, err := f.InlinedCalls(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		s = append(s, fmt.Sprintf("call %s %s:%d in %d at %s:%d parent %#x", c.Name, c.File, c.StartLine, c.Parent, c.CallFile, c.CallLine, c.ParentPC-f.Entry()))
	}
	return s
}

// TestGarbleReverse uses garble reverse as a second oracle for what is
// read from a garbled binary (fixed seed). garble reverse, given the
// build's seed and sources, maps back the obfuscated names of the
// program's functions and the positions of its call sites: garble gives
// each call a line directive "obfuscated.go:1", so that a traceback's
// return address reads as line 1 of a file named for the call, which
// reverse maps to the original file and line. The test prints, as
// traceback frames, every function's name and every call site the table
// gives (a line range at line 1, inlined calls included), runs garble
// reverse on them, and compares what it maps with the unobfuscated build
// of the same sources, as its runtime's own CallersFrames self-report
// gives it: each name mapped back must be a function of that program,
// and each call site mapped back a (function, file, line) it reports.
// What reverse leaves alone (standard library positions, names it does
// not know) is counted and logged.
func TestGarbleReverse(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	env := garbletest.Setup(t)
	src := garbledProgram(t)
	flags := []string{garbleSeed}
	tab, err := Open(env.Build(t, src, flags, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()

	// The frames: each function with its start line, then each call
	// site once.
	type frame struct {
		name, file string
		line       uint32
		call       bool
	}
	var frames []frame
	seen := map[frame]bool{}
	var lines []FunctionLine
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, frame{f.Name(), f.File(), f.StartLine(), false})
		if lines, err = f.Lines(lines); err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if fr := (frame{l.Function, l.File, l.Line, true}); l.Line == 1 && l.File != "" && !seen[fr] {
				seen[fr] = true
				frames = append(frames, fr)
			}
		}
	}
	var text strings.Builder
	for _, fr := range frames {
		fmt.Fprintf(&text, "%s(...)\n\t%s:%d +0x0\n", fr.name, fr.file, fr.line)
	}
	out := strings.Split(strings.TrimSuffix(string(env.Reverse(t, src, flags, []byte(text.String()))), "\n"), "\n")
	if len(out) != 2*len(frames) {
		t.Fatalf("garble reverse returned %d lines for %d", len(out), 2*len(frames))
	}

	// The unobfuscated build's self-report.
	plain := env.GoBuild(t, src, nil)
	b, err := exec.Command(plain, "-selfreport").Output()
	if err != nil {
		t.Fatalf("%s -selfreport: %v", plain, err)
	}
	rep, err := testcorpus.ParseReport(b)
	if err != nil {
		t.Fatal(err)
	}
	type pos struct {
		function, file string
		line           string
	}
	names, positions := map[string]bool{}, map[pos]bool{}
	for _, r := range rep.Records {
		for _, fr := range r.Frames {
			names[printName(fr.Function)] = true
			positions[pos{printName(fr.Function), path.Base(fr.File), fmt.Sprint(fr.Line)}] = true
		}
	}

	var n struct{ mapped, kept, other, sites, sitesOK, sitesLeft int }
	var other, wrong []string
	for i, fr := range frames {
		rev := strings.TrimSuffix(out[2*i], "(...)")
		name := printName(rev)
		file, line, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(out[2*i+1], "\t"), " +0x0"), ":")
		if !fr.call {
			switch {
			case rev != fr.name && names[name]:
				n.mapped++
			case rev != fr.name:
				t.Errorf("garble reverse maps %s to %s, which the unobfuscated program does not report", fr.name, rev)
			case names[name]:
				n.kept++ // not obfuscated (the runtime's names, exported methods)
			default:
				n.other++ // garble's own functions, names left obfuscated
				other = append(other, name)
			}
			continue
		}
		n.sites++
		if path.Base(file) == path.Base(fr.file) {
			n.sitesLeft++ // a position garble reverse does not know (at most the package path mapped)
			continue
		}
		if positions[pos{name, path.Base(file), line}] {
			n.sitesOK++
		} else {
			wrong = append(wrong, fmt.Sprintf("%s %s:1 → %s %s:%s", fr.name, fr.file, rev, file, line))
		}
	}
	t.Logf("%d functions: %d names mapped back to the unobfuscated program's, %d the same in both, %d in neither (garble's own, or left obfuscated): %q",
		n.mapped+n.kept+n.other, n.mapped, n.kept, n.other, other)
	t.Logf("%d call sites: %d mapped back to a position the unobfuscated program reports for that function, %d mapped to one it does not, %d not mapped (the standard library's, garble's own, and those in functions whose names reverse does not map)",
		n.sites, n.sitesOK, len(wrong), n.sitesLeft)
	for _, w := range wrong {
		t.Logf("not reported by the unobfuscated program: %s", w)
	}
	if n.mapped < 50 || n.sitesOK < 50 {
		t.Errorf("garble reverse mapped only %d names and %d call sites back", n.mapped, n.sitesOK)
	}
	if len(wrong) > n.sitesOK/20 {
		t.Errorf("%d of %d call sites mapped back are not the unobfuscated program's", len(wrong), len(wrong)+n.sitesOK)
	}
}

// openGarbled opens the garbled binary bin for the rest of the test,
// checks what Info says of it (checkGarbleInfo) and parses its
// self-report out.
// checkGarbleMode builds the program in src with env's garble and
// garbleFlags (stripped with -s -w if strip), runs it for its self-report,
// and checks the table of the binary against it (Go 1.minor's runtime),
// with the key in the runtime's code and the wrapper funcID.
func checkGarbleMode(t *testing.T, env *garbletest.Env, src string, garbleFlags []string, strip bool, minor int) (*Table, *agreement) {
	t.Helper()
	var build []string
	if strip {
		build = []string{"-ldflags=-s -w"}
	}
	bin := env.Build(t, src, garbleFlags, build)
	out, err := exec.Command(bin, "-selfreport").Output()
	if err != nil {
		t.Fatalf("%s -selfreport: %v", bin, err)
	}
	return checkGarbled(t, env, bin, out, minor)
}

// checkGarbled checks the table of bin, built by env's garble, against
// out, its self-report (Go 1.minor's runtime), with the key in the
// runtime's code and the wrapper funcID.
func checkGarbled(t *testing.T, env *garbletest.Env, bin string, out []byte, minor int) (*Table, *agreement) {
	t.Helper()
	tab, rep := openGarbled(t, bin, out)
	checkKeyInCode(t, tab)
	checkWrapperID(t, tab, env.GOROOT)
	a := compareSelfReport(t, tab, rep, minor)
	if a.unexplained() > 0 {
		t.Errorf("%d of %d PCs disagree with the self-report", a.unexplained(), a.checked)
	}
	return tab, a
}

func openGarbled(t *testing.T, bin string, out []byte) (*Table, *testcorpus.Report) {
	t.Helper()
	rep, err := testcorpus.ParseReport(out)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	in := tab.Info()
	t.Logf("info: %v, found by %q, repairs %q, validated %q", in, in.FoundBy, in.Repairs, in.Validated)
	checkGarbleInfo(t, tab)
	return tab, rep
}
