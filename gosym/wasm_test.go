package gosym

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
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
// TestCorpus's (compareSelfReport). The releases are the installed one,
// or those listed in GOSYM_RELEASES (.ci/run lists several).
func TestWasmSelfReport(t *testing.T) {
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
				minor := testcorpus.MinorVersion(goVersionOf(t, goroot))
				if goos == "wasip1" && minor < 21 || minor < 11 {
					t.Skipf("Go 1.%d has no GOOS=%s", minor, goos)
				}
				exe := objtest.BuildGosymtest(t, repo, goroot, goos, "wasm", nil, extra)
				out := runWasm(t, goroot, goos, exe)
				rep, err := testcorpus.ParseReport(out)
				if err != nil {
					t.Fatalf("self-report: %v\n%.2000s", err, out)
				}
				bin, err := os.ReadFile(exe)
				if err != nil {
					t.Fatal(err)
				}
				tab := mustTable(t, bin)
				if got := tab.GoVersion(); got != rep.GoVersion {
					t.Errorf("GoVersion = %q, the runtime says %q", got, rep.GoVersion)
				}
				a := compareSelfReport(t, tab, rep, minor)
				t.Logf("%s %s/wasm: %s", rep.GoVersion, goos, a)
			})
		}
	}
}

// goVersionOf returns the release of the toolchain at goroot.
func goVersionOf(t *testing.T, goroot string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(v)
}

// runWasm runs the module exe and returns its standard output: under
// Node.js with the release's wasm_exec_node.js (lib/wasm from Go 1.24,
// misc/wasm before; before Go 1.19, wasm_exec.js runs under Node itself),
// or under wazero. It skips the test when Node.js is missing, and fails
// it when wazero cannot be fetched (the module proxy is part of the test
// environment, as for the toolchains).
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
		var script string
		for _, s := range []string{"lib/wasm/wasm_exec_node.js", "misc/wasm/wasm_exec_node.js", "misc/wasm/wasm_exec.js"} {
			if _, err := os.Stat(filepath.Join(goroot, s)); err == nil {
				script = filepath.Join(goroot, s)
				break
			}
		}
		if script == "" {
			t.Fatalf("no wasm_exec.js in %s", goroot)
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
