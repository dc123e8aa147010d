package gosym

import (
	"bytes"
	"context"
	stdgosym "debug/gosym"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// wazero is the WebAssembly runtime the wasip1 modules run under, from the
// module proxy.
const wazero = "github.com/tetratelabs/wazero/cmd/wazero@v1.12.0"

// TestWasmSelfReport compares the library with the runtime's own
// CallersFrames at every resume point of every function of the corpus's
// test program built for WebAssembly: GOOS=js run under Node.js with the
// release's wasm_exec.js, and GOOS=wasip1 (Go 1.21 on) run under wazero.
// The program reports its frames with testdata/wasm/selfreport_wasm.go in
// place of the stub for systems other than Linux; the comparison is
// TestCorpus's (compareSelfReport), and the build with -ldflags=-s -w
// must agree with the same report (both are built with -trimpath, in
// directories of their own). The releases are the installed one,
// or those listed in GOSYM_RELEASES (.ci/run lists several).
func TestWasmSelfReport(t *testing.T) {
	if os.Getenv("GOSYM_RELEASES") == "" {
		objtest.SkipUnlessHeavy(t) // the releases phase sets GOSYM_RELEASES
	}
	if testing.Short() {
		t.Skip("builds and runs WebAssembly modules")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join("testdata", "wasm", "selfreport_wasm.go"))
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string][]byte{"args_other.go": nil, "selfreport_wasm.go": report}
	for _, v := range objtest.Releases() {
		for _, goos := range []string{"js", "wasip1"} {
			name := v
			if name == "" {
				name = "installed"
			}
			t.Run(name+"/"+goos, func(t *testing.T) {
				goroot := objtest.Toolchain(t, v)
				minor := testcorpus.MinorVersion(objtest.ToolchainVersion(t, goroot))
				if goos == "wasip1" && minor < 21 || minor < 11 {
					t.Skipf("Go 1.%d has no GOOS=%s", minor, goos)
				}
				if minor < 21 {
					t.Skipf("no wasm_exec.js for Go 1.%d here (see runWasm)", minor)
				}
				checkWasmSelfReport(t, repo, goroot, goos, minor, extra)
			})
		}
	}
}

// TestWasmHighPC is TestWasmSelfReport for Go 1.28's WebAssembly PCs,
// which have bit 63 set and no 0x1000 bias (FORMAT.md, "WebAssembly"),
// before Go 1.28 ships: the modules are built by a copy of Go 1.27.4
// whose linker and runtime are patched to that rule
// (objtest.WasmHighPCToolchain). The js and wasip1 modules must agree with
// their runtime's CallersFrames at every resume point, unstripped and
// stripped, and the first function's entry must be 1<<63.
func TestWasmHighPC(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if testing.Short() {
		t.Skip("patches a toolchain, builds and runs WebAssembly modules")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join("testdata", "wasm", "selfreport_wasm.go"))
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string][]byte{"args_other.go": nil, "selfreport_wasm.go": report}
	goroot := objtest.WasmHighPCToolchain(t)
	minor := testcorpus.MinorVersion(objtest.ToolchainVersion(t, goroot))
	for _, goos := range []string{"js", "wasip1"} {
		t.Run(goos, func(t *testing.T) {
			tab, stripped, report := checkWasmSelfReport(t, repo, goroot, goos, minor, extra)
			for f, err := range tab.Functions() {
				if err != nil {
					t.Fatal(err)
				}
				if f.Entry() != 1<<63 {
					t.Errorf("first function %s at %#x, want 1<<63", f.Name(), f.Entry())
				}
				break
			}
			if goos != "wasip1" {
				return
			}
			// The module TestWasmHighPCCommitted reads is this
			// stripped one (the build is reproducible).
			if os.Getenv(updateWasmHighPC) == "1" {
				for name, data := range map[string][]byte{wasmHighPCModule: stripped, wasmHighPCReport: report} {
					if err := os.WriteFile(name, testcorpus.Gzip(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if committed := gunzipFile(t, wasmHighPCModule); !bytes.Equal(committed, stripped) {
				t.Errorf("%s is not the module the patched toolchain builds: run this test with %s=1", wasmHighPCModule, updateWasmHighPC)
			}
		})
	}
}

// The stripped wasip1 module of TestWasmHighPC and its self-report,
// committed for TestWasmHighPCCommitted; TestWasmHighPC writes them when
// the environment variable updateWasmHighPC is 1.
const (
	wasmHighPCModule = "testdata/wasm/gosymtest.go1.27.4-wasmhighpc.wasip1-wasm.stripped.wasm.gz"
	wasmHighPCReport = "testdata/wasm/gosymtest.go1.27.4-wasmhighpc.wasip1-wasm.selfreport.gz"
	updateWasmHighPC = "GOSYM_UPDATE_WASMHIGHPC"
)

// checkWasmSelfReport builds the test program with the toolchain at
// goroot (release 1.minor) for goos/wasm with the extra files (the
// self-report), runs it and compares the table with its report, unstripped
// and stripped (TestWasmSelfReport). It returns the unstripped table, the
// stripped module and the report.
func checkWasmSelfReport(t *testing.T, repo, goroot, goos string, minor int, extra map[string][]byte) (tab *Table, stripped, report []byte) {
	t.Helper()
	// -trimpath: the stripped build below, made in another
	// directory, must name the same files.
	exe := objtest.BuildGosymtest(t, repo, goroot, goos, "wasm", []string{"-trimpath"}, extra)
	out := runWasm(t, goroot, goos, exe)
	rep, err := testcorpus.ParseReport(out)
	if err != nil {
		t.Fatalf("self-report: %v\n%.2000s", err, out)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	tab = mustTable(t, bin)
	if got := tab.GoVersion(); got != rep.GoVersion {
		t.Errorf("GoVersion = %q, the runtime says %q", got, rep.GoVersion)
	}
	a := compareSelfReport(t, tab, rep, minor)
	t.Logf("%s %s/wasm: %s", rep.GoVersion, goos, a)
	checkWasmAllocs(t, tab, rep)
	checkWasmSymbols(t, tab)

	// The stripped build (-s -w: no name section) has the
	// same functions at the same PCs: the same report holds.
	bin, err = os.ReadFile(objtest.BuildGosymtest(t, repo, goroot, goos, "wasm", []string{"-trimpath", "-ldflags=-s -w"}, extra))
	if err != nil {
		t.Fatal(err)
	}
	st := mustTable(t, bin)
	if got := st.GoVersion(); got != rep.GoVersion {
		t.Errorf("stripped: GoVersion = %q, the runtime says %q", got, rep.GoVersion)
	}
	t.Logf("%s %s/wasm, stripped: %s", rep.GoVersion, goos, compareSelfReport(t, st, rep, minor))
	return tab, bin, out
}

// checkWasmSymbols checks that the name section's symbols (package
// wasmobj, whose PC rule comes from the element section) are at the
// entries of the table's functions of the same names (FORMAT.md,
// "WebAssembly"), for every function whose name the linker keeps as is.
func checkWasmSymbols(t *testing.T, tab *Table) {
	t.Helper()
	sl, ok := tab.Object().(object.SymbolLookup)
	if !ok {
		t.Fatal("the wasm object has no LookupSymbol")
	}
	n := 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		name := f.Name()
		if strings.ContainsFunc(name, func(r rune) bool {
			return !(r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		}) {
			continue
		}
		s, err := sl.LookupSymbol(name)
		if err != nil {
			t.Errorf("LookupSymbol(%q): %v", name, err)
			continue
		}
		if s.Addr != f.Entry() {
			t.Errorf("LookupSymbol(%q).Addr = %#x, the table's entry %#x", name, s.Addr, f.Entry())
		}
		if n++; n == 64 {
			break
		}
	}
	if n == 0 {
		t.Error("no function of a plain name")
	}
}

// runWasm runs the module exe, built by Go 1.21 or later, and returns its
// standard output: under Node.js with wasm_exec_node.js, or under wazero.
// It skips the test when Node.js is missing, and fails it when wazero
// cannot be fetched (the module proxy is part of the test environment, as
// for the toolchains).
//
// The JavaScript support file is the release's own lib/wasm (Go 1.24 on)
// or, for Go 1.21–1.23, whose toolchain modules leave out misc/wasm, the
// installed toolchain's: its imports (module "gojs") are those of 1.21 on.
// Go 1.11–1.20 modules import module "go", which no later support file
// serves: TestWasmStdlib checks them.
func runWasm(t *testing.T, goroot, goos, exe string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	switch goos {
	case "js":
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("no node (Node.js runs GOOS=js modules; .ci/run installs it)")
		}
		script := filepath.Join(goroot, "lib", "wasm", "wasm_exec_node.js")
		if _, err := os.Stat(script); err != nil {
			script = filepath.Join(objtest.Toolchain(t, ""), "lib", "wasm", "wasm_exec_node.js")
		}
		cmd = exec.CommandContext(ctx, node, script, exe)
	case "wasip1":
		cmd = exec.CommandContext(ctx, "go", "run", wazero, "run", exe)
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%.4000s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	return out
}

// TestWasmStdlib compares the library with debug/gosym (as go tool
// addr2line uses it: the physical function and the innermost file:line)
// on the corpus's test program built for GOOS=js by the releases of
// objtest.Releases, Go 1.11 (the first with WebAssembly) to 1.24, at every
// resume point of every function, and the function lists. debug/gosym is
// given the pclntab found in the module's data segments by this test's own
// reader, and text start 0: it knows nothing of WebAssembly, and reads
// right only the tables whose functab holds PCs; from Go 1.25 it holds
// function indexes (FORMAT.md, "WebAssembly"), which TestWasmSelfReport
// checks.
func TestWasmStdlib(t *testing.T) {
	if os.Getenv("GOSYM_RELEASES") == "" {
		objtest.SkipUnlessHeavy(t) // the releases phase sets GOSYM_RELEASES
	}
	if testing.Short() {
		t.Skip("builds WebAssembly modules")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range objtest.Releases() {
		name := v
		if name == "" {
			name = "installed"
		}
		t.Run(name, func(t *testing.T) {
			goroot := objtest.Toolchain(t, v)
			minor := testcorpus.MinorVersion(objtest.ToolchainVersion(t, goroot))
			if minor < 11 || minor >= 25 {
				t.Skipf("Go 1.%d: no wasm, or a functab debug/gosym cannot read", minor)
			}
			exe := objtest.BuildGosymtest(t, repo, goroot, "js", "wasm", nil, nil)
			bin, err := os.ReadFile(exe)
			if err != nil {
				t.Fatal(err)
			}
			pcln := wasmPclntab(t, bin)
			lt := stdgosym.NewLineTable(pcln, 0)
			st, err := stdgosym.NewTable(nil, lt)
			if err != nil {
				t.Fatal(err)
			}
			std := &oracle.Stdlib{Table: st}
			// The resume points of each function: up to 64 in a row
			// where debug/gosym knows no line.
			var pcs []uint64
			for _, f := range std.Funcs() {
				misses := 0
				for pc := f.Low; pc < f.High && misses < 64; pc++ {
					pcs = append(pcs, pc)
					if _, line, _ := std.PCToLine(pc); line <= 0 {
						misses++
					} else {
						misses = 0
					}
				}
			}
			tab := mustTable(t, bin)
			a := compareStdlib(t, tab, std, pcs)
			a.report(t, "debug/gosym")
			t.Logf("%s js/wasm: GoVersion %q; debug/gosym: %s", name, tab.GoVersion(), a)
		})
	}
}

// wasmPclntab returns the pclntab of the Go WebAssembly module bin, read
// here from the binary format (the data section's active segments, placed
// in a memory image) without package wasmobj: the first 8-aligned address
// with a pclntab magic (little-endian) followed by 0, 0, quantum 1,
// pointer size 8.
func wasmPclntab(t *testing.T, bin []byte) []byte {
	t.Helper()
	var mem []byte
	for off := 8; off < len(bin); {
		id := bin[off]
		size, n := binary.Uvarint(bin[off+1:])
		body := bin[off+1+n : off+1+n+int(size)]
		off += 1 + n + int(size)
		if id != 11 { // data
			continue
		}
		count, n := binary.Uvarint(body)
		body = body[n:]
		for range count {
			// flags 0, i32.const <sleb128>, end, size, bytes
			var addr uint64
			k := 2
			for shift := 0; ; shift += 7 {
				addr |= uint64(body[k]&0x7f) << shift
				k++
				if body[k-1]&0x80 == 0 {
					break
				}
			}
			body = body[k+1:] // the end opcode
			size, n := binary.Uvarint(body)
			if end := addr + size; end > uint64(len(mem)) {
				mem = append(mem, make([]byte, end-uint64(len(mem)))...)
			}
			copy(mem[addr:], body[n:n+int(size)])
			body = body[n+int(size):]
		}
	}
	for off := 0; off+8 <= len(mem); off += 8 {
		b := mem[off:]
		if b[1] == 0xff && b[2] == 0xff && b[3] == 0xff && b[4] == 0 && b[5] == 0 && b[6] == 1 && b[7] == 8 {
			switch b[0] {
			case 0xfb, 0xfa, 0xf0, 0xf1:
				return b
			}
		}
	}
	t.Fatal("no pclntab in the data segments")
	return nil
}

// checkWasmAllocs checks that lookups of wasm PCs (the self-report's)
// allocate nothing once warm, as TestLookupsDoNotAllocate does for the
// test binary.
func checkWasmAllocs(t *testing.T, tab *Table, rep *testcorpus.Report) {
	t.Helper()
	if raceEnabled {
		return // sync.Pool drops items under the race detector
	}
	var pcs []uint64
	for _, r := range rep.Records {
		if !r.Gap && len(r.Frames) > 0 && len(pcs) < 2048 {
			pcs = append(pcs, r.PC)
		}
	}
	checkNoAllocs(t, tab, pcs)
}
