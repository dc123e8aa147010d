package oracle

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
)

// progMain is a program with known inline chains. Each probe calls where
// (never inlined) through inlinable functions; where prints the return
// address into its caller and every frame runtime.CallersFrames reports
// for the stack above it.
const progMain = `package main

import (
	"fmt"
	"runtime"

	dot "ex.com/dot.pkg"
)

type T struct{ n int }

//go:noinline
func where(probe string) {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	fmt.Printf("PROBE\t%s\t%x\n", probe, pcs[0])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		fmt.Printf("FRAME\t%s\t%s\t%d\n", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
}

func c(p string) { where(p) }

func b(p string) { c(p) }

func a(p string) { b(p) }

func (t *T) M(p string) { c(p) }

//go:noinline
func ctl(p string) { c(p) }

func withClosure(p string) {
	f := func() { c(p) }
	f()
}

func main() {
	a("chain")
	(&T{}).M("method")
	f := func(p string) { b(p) }
	f("closure")
	withClosure("inlined closure")
	ctl("control")
	gen("generic")
	dot.Call(c, "dotted path")
}
`

// progDot is a package whose import path has a dot in its last element,
// which symbol names escape as %2e.
const progDot = `package dot

func Call(f func(string), p string) { f(p) }
`

const progGenOld = `// +build !go1.18

package main

func gen(p string) {}
`

const progGenNew = `//go:build go1.18
// +build go1.18

package main

func G[X any](x X, p string) { c(p) }

func gen(p string) { G(1, p) }
`

// wantChains are the inline stacks (innermost first, names as
// NormalizeName spells them) that the installed toolchain produces at each
// probe; older toolchains inline less.
var wantChains = map[string][]string{
	"chain":   {"main.c", "main.b", "main.a", "main.main"},
	"method":  {"main.c", "main.(*T).M", "main.main"},
	"closure": {"main.c", "main.b", "main.main.func1", "main.main"},
	"control": {"main.c", "main.ctl"},
	// withClosure itself is not inlined by Go 1.26, but its closure is.
	"inlined closure": {"main.c", "main.withClosure.func1", "main.withClosure"},
	// Import paths escape dots of their last element in symbol names.
	"dotted path": {"main.c", "ex.com/dot%2epkg.Call", "main.main"},
	"generic":     {"main.c", "main.G[...]", "main.gen", "main.main"},
}

// progSrc writes the program once per test binary into a GOPATH tree so
// that every build (native, cross, other toolchains) records the same
// file names.
var progSrc = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "oracle-prog-")
	if err != nil {
		return "", err
	}
	pkg := filepath.Join(dir, "src", "prog")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return "", err
	}
	dotPkg := filepath.Join(dir, "src", "ex.com", "dot.pkg")
	if err := os.MkdirAll(dotPkg, 0o755); err != nil {
		return "", err
	}
	for name, src := range map[string]string{
		"prog/main.go":          progMain,
		"prog/gen_old.go":       progGenOld,
		"prog/gen_new.go":       progGenNew,
		"ex.com/dot.pkg/dot.go": progDot,
	} {
		if err := os.WriteFile(filepath.Join(dir, "src", name), []byte(src), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := progSrc(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// buildProg builds the program with the go command of goroot ("" for the
// go on $PATH) for goos/goarch ("" for the host) and returns its path.
// It uses GOPATH mode, which every Go release understands.
func buildProg(t *testing.T, goroot, goos, goarch string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs")
	}
	gopath, err := progSrc()
	if err != nil {
		t.Fatal(err)
	}
	gocmd := "go"
	env := os.Environ()
	if goroot != "" {
		gocmd = filepath.Join(goroot, "bin", "go")
		env = append(env, "GOROOT="+goroot, "GOENV=off")
	} else if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found")
	}
	out := filepath.Join(t.TempDir(), "prog")
	if goos == "windows" {
		out += ".exe"
	}
	cmd := exec.Command(gocmd, "build", "-o", out, ".")
	cmd.Dir = filepath.Join(gopath, "src", "prog")
	cmd.Env = append(env, "GOFLAGS=", "GO111MODULE=off", "GOPATH="+gopath,
		"GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if goos != "" {
		cmd.Env = append(cmd.Env, "GOOS="+goos, "GOARCH="+goarch)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, b)
	}
	return out
}

type probe struct {
	name   string
	pc     uint64 // return address in the physical caller of where
	frames []Frame
}

// runProg runs the program and parses its report.
func runProg(t *testing.T, exe string) map[string]probe {
	t.Helper()
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	probes := make(map[string]probe)
	var cur *probe
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case f[0] == "PROBE" && len(f) == 3:
			pc, err := strconv.ParseUint(f[2], 16, 64)
			if err != nil {
				t.Fatalf("bad line %q", sc.Text())
			}
			if cur != nil {
				probes[cur.name] = *cur
			}
			cur = &probe{name: f[1], pc: pc}
		case f[0] == "FRAME" && len(f) == 4 && cur != nil:
			line, _ := strconv.Atoi(f[3])
			cur.frames = append(cur.frames, Frame{f[1], f[2], line})
		default:
			t.Fatalf("bad line %q", sc.Text())
		}
	}
	if cur != nil {
		probes[cur.name] = *cur
	}
	return probes
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func normalized(fs []Frame) []Frame {
	out := make([]Frame, len(fs))
	for i, f := range fs {
		out[i] = Frame{NormalizeName(f.Function), f.File, f.Line}
	}
	return out
}

func funcNames(fs []Frame) []string {
	var names []string
	for _, f := range fs {
		names = append(names, NormalizeName(f.Function))
	}
	return names
}

func findFunc(fs []Func, name string) (Func, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return Func{}, false
}

// checkAgainstRuntime compares both oracles with what the program itself
// reported. If exact, the inline chains must be wantChains.
func checkAgainstRuntime(t *testing.T, exe string, exact bool) {
	probes := runProg(t, exe)
	data := readFile(t, exe)
	d, err := NewDWARF(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStdlib(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) < len(wantChains)-1 { // "generic" needs Go 1.18
		t.Fatalf("program reported only %d probes", len(probes))
	}
	for name, p := range probes {
		pc := p.pc - 1 // back into the call instruction
		got, ok := d.Frames(pc, nil)
		if !ok {
			t.Errorf("%s: DWARF has no frames at %#x", name, pc)
			continue
		}
		if len(got) > len(p.frames) {
			t.Errorf("%s: DWARF frames %v, runtime frames %v", name, got, p.frames)
			continue
		}
		g, w := normalized(got), normalized(p.frames[:len(got)])
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s at %#x:\nDWARF   %v\nruntime %v", name, pc, g, w)
		}
		t.Logf("%s: %v", name, funcNames(got))
		if want := wantChains[name]; exact && fmt.Sprint(funcNames(got)) != fmt.Sprint(want) {
			t.Errorf("%s: inline chain %v, want %v", name, funcNames(got), want)
		}
		// The outermost frame is the physical function containing pc.
		outer := got[len(got)-1]
		f, ok := findFunc(d.Functions(), outer.Function)
		if !ok || pc < f.Low || pc >= f.High {
			t.Errorf("%s: outermost frame %s is not a subprogram containing %#x (%+v)", name, outer.Function, pc, f)
		}
		// debug/gosym: innermost file/line, physical function.
		file, line, fn := s.PCToLine(pc)
		if file != got[0].File || line != got[0].Line || NormalizeName(fn) != NormalizeName(outer.Function) {
			t.Errorf("%s: gosym PCToLine(%#x) = %s:%d %s, DWARF says %s:%d %s",
				name, pc, file, line, fn, got[0].File, got[0].Line, outer.Function)
		}
	}
	mainDW, ok1 := findFunc(d.Functions(), "main.main")
	mainSym, ok2 := findFunc(s.Funcs(), "main.main")
	if !ok1 || !ok2 || mainDW.Low != mainSym.Low {
		t.Errorf("main.main: DWARF %+v (found %v), gosym %+v (found %v)", mainDW, ok1, mainSym, ok2)
	}
}

// TestRuntime builds the program for the host with the installed toolchain,
// runs it, and compares both oracles with the runtime's own frames.
func TestRuntime(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "windows", "freebsd", "netbsd", "openbsd":
	default:
		t.Skipf("no DWARF oracle for %s binaries", runtime.GOOS)
	}
	checkAgainstRuntime(t, buildProg(t, "", "", ""), true)
}

// TestRuntimeToolchains does what TestRuntime does with each toolchain
// listed in $ORACLE_GOROOTS (GOROOT directories separated by the OS list
// separator), e.g. releases unpacked from the module cache.
func TestRuntimeToolchains(t *testing.T) {
	roots := filepath.SplitList(os.Getenv("ORACLE_GOROOTS"))
	if len(roots) == 0 {
		t.Skip("ORACLE_GOROOTS not set")
	}
	for _, root := range roots {
		t.Run(filepath.Base(root), func(t *testing.T) {
			exe := buildProg(t, root, "", "")
			checkAgainstRuntime(t, exe, false)
			if runtime.GOOS == "linux" {
				checkBoundaries(t, readFile(t, exe))
				checkCross(t, root)
			}
		})
	}
}

// TestCrossFormats checks both oracles on cross-built binaries of every
// executable format against the host build (all builds compile the same
// source files, so they record the same file names and lines).
func TestCrossFormats(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("needs a host whose binaries carry DWARF")
	}
	checkCross(t, "")
}

// checkCross builds the program with the toolchain in goroot for the host
// and for linux, darwin, windows and plan9 on amd64. The host build's DWARF
// frames at the "chain" probe are the expected answer: some PC of the same
// physical function must have the same inline stack in each DWARF binary,
// and the same innermost file:line in each binary's pclntab.
func checkCross(t *testing.T, goroot string) {
	host := buildProg(t, goroot, "", "")
	d, err := NewDWARF(readFile(t, host))
	if err != nil {
		t.Fatal(err)
	}
	want, ok := d.Frames(runProg(t, host)["chain"].pc-1, nil)
	if !ok {
		t.Fatal("host DWARF has no frames at the chain probe")
	}
	want = normalized(want)
	phys := want[len(want)-1].Function
	for _, target := range []string{"linux/amd64", "darwin/amd64", "windows/amd64", "plan9/amd64"} {
		t.Run(strings.ReplaceAll(target, "/", "_"), func(t *testing.T) {
			goos, goarch, _ := strings.Cut(target, "/")
			data := readFile(t, buildProg(t, goroot, goos, goarch))
			s, err := NewStdlib(data)
			if err != nil {
				t.Fatal(err)
			}
			sym, ok := findFunc(s.Funcs(), phys)
			if !ok {
				t.Fatalf("gosym: no %s", phys)
			}
			if file, line, fn := s.PCToLine(sym.Low); fn != phys || !strings.HasSuffix(file, "main.go") || line == 0 {
				t.Errorf("gosym PCToLine(%s entry) = %s:%d %s", phys, file, line, fn)
			}
			// Some PC of phys must be at the innermost call (c calls where).
			pc, found := uint64(0), false
			for pc = sym.Low; pc < sym.High; pc++ {
				if file, line, _ := s.PCToLine(pc); file == want[0].File && line == want[0].Line {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("gosym: no PC of %s at %s:%d", phys, want[0].File, want[0].Line)
			}
			if goos == "plan9" {
				return // no DWARF
			}
			d, err := NewDWARF(data)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := findFunc(d.Functions(), phys); !ok || f.Low != sym.Low {
				t.Errorf("%s: DWARF %+v, gosym %+v", phys, f, sym)
			}
			got, ok := d.Frames(pc, nil)
			if !ok || fmt.Sprint(normalized(got)) != fmt.Sprint(want) {
				t.Errorf("DWARF frames at %#x = %v, want %v", pc, got, want)
			}
		})
	}
}

// TestBoundaries walks every range of the host build and checks the DWARF
// index for consistency, and its innermost file:line against debug/gosym.
func TestBoundaries(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF host only")
	}
	checkBoundaries(t, readFile(t, buildProg(t, "", "", "")))
}

// checkBoundaries checks Frames at every boundary of the binary in data:
// the outermost frame must be the subprogram containing the PC, every
// outer frame must have a call site, and the innermost file:line and the
// physical function must agree with debug/gosym at nearly every PC.
func checkBoundaries(t *testing.T, data []byte) {
	d, err := NewDWARF(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStdlib(data)
	if err != nil {
		t.Fatal(err)
	}
	bs := d.Boundaries()
	funcs := d.Functions()
	var frames []Frame
	n, notGo, line1, disagree := 0, 0, 0, 0
	for _, pc := range bs {
		var ok bool
		frames, ok = d.Frames(pc, frames)
		if !ok {
			continue
		}
		n++
		outer := frames[len(frames)-1]
		i := findIndex(funcs, pc)
		if i < 0 || funcs[i].Name != outer.Function {
			t.Fatalf("%#x: outermost frame %s is not the subprogram there", pc, outer.Function)
		}
		for _, f := range frames[1:] {
			if f.File == "" || f.Line == 0 {
				t.Fatalf("%#x: call site missing in %v", pc, frames)
			}
		}
		file, line, fn := s.PCToLine(pc)
		switch {
		case fn == "":
			notGo++ // C code of an externally linked binary
		case file == frames[0].File && line == frames[0].Line && NormalizeName(fn) == NormalizeName(outer.Function):
		case frames[0].Line == 1 && line != 1:
			line1++ // Go 1.14's spurious rows at the end of functions
		default:
			disagree++
			if disagree <= 5 {
				t.Logf("%#x: DWARF %v; gosym %s:%d %s", pc, frames, file, line, fn)
			}
		}
	}
	t.Logf("%d boundaries, %d with frames: %d not in the pclntab, %d at line 1 in DWARF only, %d other disagreements with debug/gosym",
		len(bs), n, notGo, line1, disagree)
	if n < len(funcs) || disagree > n/1000 {
		t.Errorf("too few frames or too many disagreements")
	}
}

// TestBinaries runs checkBoundaries on each ELF, Mach-O or PE file listed
// in $ORACLE_BINARIES (separated by the OS list separator).
func TestBinaries(t *testing.T) {
	files := filepath.SplitList(os.Getenv("ORACLE_BINARIES"))
	if len(files) == 0 {
		t.Skip("ORACLE_BINARIES not set")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			checkBoundaries(t, readFile(t, name))
		})
	}
}

// findIndex returns the index of the function containing pc, or -1.
func findIndex(fs []Func, pc uint64) int {
	lo, hi := 0, len(fs)
	for lo < hi {
		m := (lo + hi) / 2
		if fs[m].Low <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 && pc < fs[lo-1].High {
		return lo - 1
	}
	return -1
}

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"main.main":                        "main.main",
		"main.(*T).M":                      "main.(*T).M",
		"main.G[go.shape.int]":             "main.G[...]",
		"main.(*Box[go.shape.string]).Get": "main.(*Box[...]).Get",
		"main.Sum[go.shape.int_0]":         "main.Sum[...]",
		"main.G[...]":                      "main.G[...]",
		"type:.eq.[2]runtime.Frame":        "type:.eq.[...]runtime.Frame",
		"main.func·001":                    "main.func.001",
		"os.FileMode.String·i":             "os.FileMode.String.i",
		"a]b[c":                            "a]b[c",
	} {
		if got := NormalizeName(in); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkNewDWARF indexes a build of cmd/go with DWARF (release builds
// of the go command have none), or the file named by $ORACLE_BENCH.
func BenchmarkNewDWARF(b *testing.B) {
	data := benchBinary(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := NewDWARF(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrames queries every boundary of the same binary once per op.
func BenchmarkFrames(b *testing.B) {
	d, err := NewDWARF(benchBinary(b))
	if err != nil {
		b.Fatal(err)
	}
	bs := d.Boundaries()
	var buf []Frame
	for b.Loop() {
		for _, pc := range bs {
			buf, _ = d.Frames(pc, buf)
		}
	}
	b.ReportMetric(float64(len(bs)), "pcs/op")
}

var benchData = sync.OnceValues(func() ([]byte, error) {
	if name := os.Getenv("ORACLE_BENCH"); name != "" {
		return os.ReadFile(name)
	}
	dir, err := os.MkdirTemp("", "oracle-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "go")
	cmd := exec.Command("go", "build", "-o", exe, "cmd/go")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %v\n%s", cmd, err, out)
	}
	return os.ReadFile(exe)
})

func benchBinary(b *testing.B) []byte {
	data, err := benchData()
	if err != nil {
		b.Skip(err)
	}
	return data
}
