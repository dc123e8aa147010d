package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// addrsOf returns addresses worth symbolizing in tab: for every function
// (every step-th, for big tables), its entry, its last byte and the start
// of each of its line ranges; and a few addresses outside every function.
func addrsOf(t testing.TB, tab *gosym.Table, step int) []uint64 {
	t.Helper()
	in := tab.Info()
	addrs := []uint64{0, 1, in.TextStart - 1, in.TextEnd, in.TextEnd + 0x1000, 1<<64 - 1}
	var lines []gosym.FunctionLine
	i := 0
	for fn, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		i++
		if i%step != 0 {
			continue
		}
		addrs = append(addrs, fn.Entry(), fn.End()-1)
		lines, err = fn.Lines(lines)
		if err != nil {
			t.Fatalf("%s: %v", fn.Name(), err)
		}
		for _, l := range lines {
			if l.PCLo != fn.Entry() {
				addrs = append(addrs, l.PCLo)
			}
		}
	}
	return addrs
}

// knownDifference explains why go tool addr2line answers want (function,
// file:line) where gosym answers got at pc, when the reason is a known bug of
// debug/gosym; otherwise it returns "". minor is the Go release's minor
// number.
//
// The known differences, all cases where go tool addr2line is wrong:
//   - A function without a line table (the FIPS text markers of Go 1.24+
//     and the build ID function of Plan 9 binaries):
//     debug/gosym decodes whatever bytes its zero offset points to and prints
//     a garbage file:line (":-6", "internal/cpu/cpu.go:12"); the runtime
//     and gosym know no line there (":-1").
//   - Go 1.2–1.7: debug/gosym's loop over the file table stops one entry
//     early, so PCs in the last file get file "" (":33" instead of
//     ".../asm_amd64.s:33").
//   - Stripped cgo (externally linked) binaries: cmd/internal/objfile
//     takes the start of .text as the text start, which is wrong when C
//     code precedes Go code, so every answer is shifted: see
//     TestAddr2lineGoToolCgoStripped.
func knownDifference(tab *gosym.Table, minor int, pc uint64, want, got [2]string) string {
	if want[0] != got[0] {
		return ""
	}
	fn, err := tab.ResolveFunction(pc)
	if err != nil {
		return ""
	}
	lines, err := fn.Lines(nil)
	if err != nil {
		return ""
	}
	noTable := true
	for _, l := range lines {
		if l.File != "" || l.Line != 0 {
			noTable = false
		}
	}
	if noTable && got[1] == ":-1" {
		return "function without a line table"
	}
	if minor >= 2 && minor <= 7 && strings.HasPrefix(want[1], ":") && strings.HasSuffix(got[1], want[1]) {
		return "Go 1.2-1.7 last file dropped"
	}
	return ""
}

// compareWithGoTool symbolizes addrs with go tool addr2line and with gosym
// addr2line in-process, and checks that they agree except for known
// differences. It returns the number of identical answers.
func compareWithGoTool(t *testing.T, path string, minor int, addrs []uint64) (same int, known map[string]int) {
	t.Helper()
	var in strings.Builder
	for i, pc := range addrs {
		// Both spellings: with and without 0x.
		if i%2 == 0 {
			fmt.Fprintf(&in, "%#x\n", pc)
		} else {
			fmt.Fprintf(&in, "%x\n", pc)
		}
	}
	want := runTool(t, in.String(), goTool(t, "addr2line"), path)
	got := mustRun(t, in.String(), "addr2line", path)
	wl := strings.Split(want, "\n")
	gl := strings.Split(got, "\n")
	if len(wl) != len(gl) || len(wl) != 2*len(addrs)+1 {
		t.Fatalf("%d addresses: go tool addr2line wrote %d lines, gosym %d", len(addrs), len(wl), len(gl))
	}
	tab := openTable(t, path)
	known = map[string]int{}
	bad := 0
	for i, pc := range addrs {
		w := [2]string{wl[2*i], wl[2*i+1]}
		g := [2]string{gl[2*i], gl[2*i+1]}
		if w == g {
			same++
			continue
		}
		if why := knownDifference(tab, minor, pc, w, g); why != "" {
			known[why]++
			continue
		}
		if bad++; bad <= 10 {
			t.Errorf("%#x: go tool addr2line says %q, gosym %q", pc, w, g)
		}
	}
	if bad > 10 {
		t.Errorf("... %d differences in all", bad)
	}
	if len(known) == 0 && want != got {
		t.Errorf("outputs differ but no line does")
	}
	return same, known
}

func TestAddr2lineGoToolCorpus(t *testing.T) {
	total := 0
	for _, b := range corpus(t) {
		t.Run(b.Name, func(t *testing.T) {
			if b.stdlibBlind() {
				t.Skip("go tool addr2line cannot find the table of a stripped PE or Plan 9 file")
			}
			tab := openTable(t, b.Path)
			addrs := addrsOf(t, tab, 1)
			same, known := compareWithGoTool(t, b.Path, b.Minor(), addrs)
			total += same
			t.Logf("%s: %d of %d addresses identical to go tool addr2line; known differences %v", b.Name, same, len(addrs), known)
		})
	}
	t.Logf("corpus: %d identical answers", total)
}

// TestAddr2lineGoToolFormats compares with go tool addr2line on cross
// builds of a small program for every object format and several
// architectures.
func TestAddr2lineGoToolFormats(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if testing.Short() {
		t.Skip("cross builds")
	}
	// One target per format and a few architectures, built by
	// objtest once per process and shared with other tests.
	targets := []objtest.Target{
		objtest.LinuxAMD64, objtest.Linux386, objtest.LinuxARM64, objtest.LinuxPPC64,
		objtest.LinuxS390X, objtest.LinuxStripped,
		objtest.DarwinARM64, objtest.WindowsAMD64, objtest.Plan9386, objtest.AIXPPC64,
	}
	for _, target := range targets {
		t.Run(target.Name, func(t *testing.T) {
			path := objtest.Path(t, target)
			tab := openTable(t, path)
			addrs := addrsOf(t, tab, 1)
			same, known := compareWithGoTool(t, path, minorOf(tab.GoVersion()), addrs)
			t.Logf("%s: %d of %d addresses identical to go tool addr2line; known differences %v", target.Name, same, len(addrs), known)
		})
	}
}

func TestAddr2lineGoToolSelf(t *testing.T) {
	path := selfPath(t)
	addrs := addrsOf(t, openTable(t, path), 1)
	same, known := compareWithGoTool(t, path, minorOf(runtime.Version()), addrs)
	t.Logf("test binary: %d of %d addresses identical to go tool addr2line; known differences %v", same, len(addrs), known)
}

func TestAddr2lineGoToolGoCommand(t *testing.T) {
	path := goBinary(t)
	tab := openTable(t, path)
	step := 4 // every 4th function of about 15,000
	if testing.Short() {
		step = 16
	}
	addrs := addrsOf(t, tab, step)
	same, known := compareWithGoTool(t, path, minorOf(tab.GoVersion()), addrs)
	t.Logf("%s (%s): %d of %d addresses identical to go tool addr2line; known differences %v", path, tab.GoVersion(), same, len(addrs), known)
}

// TestAddr2lineGoToolCgoStripped builds a stripped, externally linked cgo
// program, where go tool addr2line answers for each address what gosym
// answers for an address further on: the distance from the .text section
// (where C code comes first) to the Go text, which debug/gosym is not
// told. Everything else must agree.
func TestAddr2lineGoToolCgoStripped(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if testing.Short() {
		t.Skip("builds a cgo program")
	}
	goCmd := goCommand(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ELF only")
	}
	dir := t.TempDir()
	src := `package main

// int add(int a, int b) { return a + b; }
import "C"

//go:noinline
func work(n int) int { return int(C.add(C.int(n), 2)) }

func main() { println(work(3)) }
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prog")
	cmd := exec.Command(goCmd, "build", "-ldflags=-s -w -linkmode=external", "-o", path, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("go build: %v\n%s", err, out)
	}

	tab := openTable(t, path)
	obj, err := object.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	secs, err := obj.Sections()
	if err != nil {
		t.Fatal(err)
	}
	var textAddr uint64
	for _, s := range secs {
		if s.Name == ".text" {
			textAddr = s.Addr
		}
	}
	shift := tab.Info().TextStart - textAddr
	if textAddr == 0 || shift == 0 {
		t.Skipf(".text at %#x, Go text at %#x: no C code first", textAddr, tab.Info().TextStart)
	}

	var addrs []uint64
	for fn, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, fn.Entry(), (fn.Entry()+fn.End())/2)
	}
	var in strings.Builder
	for _, pc := range addrs {
		fmt.Fprintf(&in, "%#x\n", pc)
	}
	want := strings.Split(runTool(t, in.String(), goTool(t, "addr2line"), path), "\n")
	got := strings.Split(mustRun(t, in.String(), "addr2line", path), "\n")
	same, shifted := 0, 0
	for i, pc := range addrs {
		w := [2]string{want[2*i], want[2*i+1]}
		g := [2]string{got[2*i], got[2*i+1]}
		if w == g {
			same++
			continue
		}
		s := strings.Split(mustRun(t, "", "addr2line", path, hex(pc+shift)), "\n")
		if w == [2]string{s[0], s[1]} {
			shifted++
			continue
		}
		t.Errorf("%#x: go tool addr2line says %q, gosym %q (and %q at %#x)", pc, w, g, s[:2], pc+shift)
	}
	if shifted == 0 {
		t.Errorf("no shifted answer: is the bug fixed?")
	}
	t.Logf("stripped cgo binary: %d of %d addresses identical; %d answered by go tool addr2line for the address %#x further", same, len(addrs), shifted, shift)
}

// minorOf returns N of "go1.N..." or -1.
func minorOf(v string) int {
	var minor int
	if _, err := fmt.Sscanf(v, "go1.%d", &minor); err != nil {
		return -1
	}
	return minor
}

// The functions below are inlined into callInlined, and runtime.Callers
// inside them reports the inline stack the runtime sees.

func inlinedLeaf(pcs []uintptr) int {
	return runtime.Callers(1, pcs)
}

func inlinedMiddle(pcs []uintptr) int {
	return inlinedLeaf(pcs) // a call inlined into inlinedMiddle
}

//go:noinline
func callInlined(pcs []uintptr) int {
	return inlinedMiddle(pcs)
}

// TestAddr2lineRuntime checks -inlines and -json against the runtime's own
// frames for PCs of the running test binary.
func TestAddr2lineRuntime(t *testing.T) {
	path := selfPath(t)
	tab := openTable(t, path)
	pcs := make([]uintptr, 64)
	pcs = pcs[:callInlined(pcs)]

	// A PIE may be loaded elsewhere than it was linked.
	fn, err := tab.LookupFunction(pkg + "callInlined")
	if err != nil {
		t.Fatal(err)
	}
	bias := uint64(reflect.ValueOf(callInlined).Pointer()) - fn.Entry()

	// The inline stacks of the first three physical frames: inlinedLeaf
	// (inlined twice into callInlined), TestAddr2lineRuntime and
	// testing.tRunner. The runtime reports a logical frame per PC of
	// pcs (Callers adds virtual PCs for inlined calls); the physical one
	// has Func set, and the innermost one's PC is the call instruction
	// (the runtime has backed up from the return address).
	var args []string
	var want [][]runtime.Frame
	frames := runtime.CallersFrames(pcs)
	var stack []runtime.Frame // innermost first
	for len(want) < 3 {
		f, more := frames.Next()
		stack = append(stack, f)
		if f.Func != nil {
			args = append(args, fmt.Sprintf("%#x", uint64(stack[0].PC)-bias))
			want = append(want, stack)
			stack = nil
		}
		if !more {
			break
		}
	}
	if len(want) == 0 || len(want[0]) < 3 {
		t.Fatalf("runtime reported %v; want the inlined stack inlinedLeaf, inlinedMiddle, callInlined first", want)
	}

	out := mustRun(t, "", append([]string{"addr2line", "-inlines", path}, args...)...)
	var wantOut strings.Builder
	for _, stack := range want {
		for _, f := range stack {
			fmt.Fprintf(&wantOut, "%s\n%s:%d\n", f.Function, f.File, f.Line)
		}
	}
	if out != wantOut.String() {
		t.Errorf("addr2line -inlines:\n%s\nruntime.CallersFrames:\n%s", out, wantOut.String())
	}

	out = mustRun(t, "", append([]string{"addr2line", "-json", path}, args...)...)
	dec := json.NewDecoder(strings.NewReader(out))
	for i, stack := range want {
		var got jsonAddr
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.Address != args[i] || got.ModuleName != path || len(got.Symbol) != len(stack) {
			t.Errorf("-json %s: %+v; want %d frames", args[i], got, len(stack))
			continue
		}
		for j, f := range stack {
			s := got.Symbol[j]
			if s.FunctionName != f.Function || s.FileName != f.File || int(s.Line) != f.Line {
				t.Errorf("-json %s frame %d: %+v; runtime: %s %s:%d", args[i], j, s, f.Function, f.File, f.Line)
			}
			if (s.StartAddress != "") != (j == len(stack)-1) {
				t.Errorf("-json %s frame %d: StartAddress %q", args[i], j, s.StartAddress)
			}
		}
		if got.Symbol[len(stack)-1].StartAddress != hex(uint64(stack[len(stack)-1].Entry)-bias) {
			t.Errorf("-json %s: StartAddress %s, want %#x", args[i], got.Symbol[len(stack)-1].StartAddress, fn.Entry())
		}
	}
}

// TestAddr2lineInput checks how input lines are parsed, against go tool
// addr2line for the lines both accept, and the handling of bad lines.
func TestAddr2lineInput(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	tab := openTable(t, b.Path)
	main, err := tab.LookupFunction("main.main")
	if err != nil {
		t.Fatal(err)
	}
	pc := main.Entry() + 8
	valid := fmt.Sprintf("%#x\n%x\n0x0\nffffffffffffffff\nsrc/main.go:10\n", pc, pc)
	want := runTool(t, valid, goTool(t, "addr2line"), b.Path)
	if got := mustRun(t, valid, "addr2line", b.Path); got != want {
		t.Errorf("gosym addr2line:\n%s\ngo tool addr2line:\n%s", got, want)
	}
	// The same addresses as arguments.
	if got := mustRun(t, "", "addr2line", b.Path, fmt.Sprintf("%#x", pc), fmt.Sprintf("%x", pc), "0x0", "ffffffffffffffff", "src/main.go:10"); got != want {
		t.Errorf("gosym addr2line with arguments:\n%s\ngo tool addr2line:\n%s", got, want)
	}

	// Bad lines are reported and answered "?"; the stream goes on.
	one := strings.SplitAfterN(want, "\n", 3)[:2]
	in := fmt.Sprintf("  %#X \nzz\n\n0x\n-1\n1ffffffffffffffff\n%x\r\n", pc, pc)
	out, errOut, status := gosymCmd(t, in, "addr2line", b.Path)
	wantOut := one[0] + one[1] + strings.Repeat("?\n?:0\n", 5) + one[0] + one[1]
	if out != wantOut || status != 1 {
		t.Errorf("bad lines: status %d, output\n%s\nwant\n%s", status, out, wantOut)
	}
	for _, s := range []string{`"zz"`, `""`, `"0x"`, `"-1"`, `"1ffffffffffffffff": more than 64 bits`} {
		if !strings.Contains(errOut, "gosym: bad address "+s) {
			t.Errorf("stderr does not report %s:\n%s", s, errOut)
		}
	}
	if n := strings.Count(errOut, "\n"); n != 5 {
		t.Errorf("%d lines on stderr, want 5:\n%s", n, errOut)
	}

	// A long bad line is quoted short on stderr and in -json's message,
	// as arguments and on standard input.
	long := "0x" + strings.Repeat("z", 1<<20)
	wantErr := fmt.Sprintf("gosym: bad address %q... (%d bytes)\n", long[:maxQuoted], len(long))
	for _, args := range [][]string{{"addr2line", b.Path}, {"addr2line", b.Path, long}} {
		out, errOut, status := gosymCmd(t, long+"\n", args...)
		if status != 1 || out != "?\n?:0\n" || errOut != wantErr {
			t.Errorf("gosym addr2line with a 1 MB bad address (%d arguments): status %d, output %q, stderr %.200q; want %q",
				len(args), status, out, errOut, wantErr)
		}
	}
	out, _, _ = gosymCmd(t, long+"\n", "addr2line", "-json", b.Path)
	var longBad jsonBad
	if err := json.Unmarshal([]byte(out), &longBad); err != nil || longBad.Error.Message != strings.TrimSuffix(strings.TrimPrefix(wantErr, "gosym: "), "\n") {
		t.Errorf("addr2line -json with a 1 MB bad address: %v, message %.200q", err, longBad.Error.Message)
	}
	// Multi-byte characters are not split.
	if got, want := quoteShort(strings.Repeat("é", 30)), fmt.Sprintf("%q... (60 bytes)", strings.Repeat("é", 20)); got != want {
		t.Errorf("quoteShort(30 é) = %s, want %s", got, want)
	}

	// -json: one object per line, bad lines too.
	out, _, status = gosymCmd(t, "zz\n"+fmt.Sprintf("%x\n", pc)+"1:2\n", "addr2line", "-json", b.Path)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if status != 1 || len(lines) != 3 {
		t.Fatalf("-json: status %d, output\n%s", status, out)
	}
	var bad jsonBad
	if err := json.Unmarshal([]byte(lines[0]), &bad); err != nil || bad.Address != "zz" || !strings.Contains(bad.Error.Message, "bad address") {
		t.Errorf("-json bad line: %s (%v)", lines[0], err)
	}
	var good jsonAddr
	if err := json.Unmarshal([]byte(lines[1]), &good); err != nil || good.Address != hex(pc) || len(good.Symbol) == 0 ||
		good.Symbol[len(good.Symbol)-1].FunctionName != "main.main" {
		t.Errorf("-json: %s (%v)", lines[1], err)
	}
	if err := json.Unmarshal([]byte(lines[2]), &bad); err != nil || bad.Error.Message != "reverse translation not implemented" {
		t.Errorf("-json file:line: %s (%v)", lines[2], err)
	}
	// An address in no function has an empty (not null) Symbol.
	out = mustRun(t, "", "addr2line", "-json", b.Path, "0")
	if !strings.Contains(out, `"Symbol":[]`) {
		t.Errorf("-json 0: %s", out)
	}
}

// TestAddr2lineInteractive checks that each line of standard input is
// answered before the next is read, as a program that writes an address
// and waits for the answer needs.
func TestAddr2lineInteractive(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		status := run([]string{"addr2line", b.Path}, inR, outW, io.Discard)
		outW.Close()
		done <- status
	}()
	out := bufio.NewReader(outR)
	for _, addr := range []string{"0x401000", "zz", "0x480780"} {
		if _, err := io.WriteString(inW, addr+"\n"); err != nil {
			t.Fatal(err)
		}
		// The answer comes while the input is still open.
		for range 2 {
			if _, err := out.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	inW.Close()
	if rest, _ := io.ReadAll(out); len(rest) != 0 {
		t.Errorf("more output: %q", rest)
	}
	if status := <-done; status != 1 {
		t.Errorf("status %d after a bad line, want 1", status)
	}
}
