package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// pkg prefixes the symbol names of the functions of this package.
const pkg = "github.com/gosym-dev/gosym/cmd/gosym."

// gosymCmd runs the command in-process with args and the given standard
// input, and returns its outputs and exit status.
func gosymCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = run(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), status
}

// mustRun runs the command in-process and fails the test unless it
// succeeds with nothing on stderr.
func mustRun(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, errOut, status := gosymCmd(t, stdin, args...)
	if status != 0 || errOut != "" {
		t.Fatalf("gosym %s: status %d, stderr:\n%s", strings.Join(args, " "), status, errOut)
	}
	return out
}

// mustRunJSON runs the command as mustRun does, with args that ask for JSON
// Lines, and decodes its output into one T per object.
func mustRunJSON[T any](t testing.TB, args ...string) []T {
	t.Helper()
	var vs []T
	dec := json.NewDecoder(strings.NewReader(mustRun(t, "", args...)))
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// selfPath returns the path of the running test binary.
func selfPath(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable path:", err)
	}
	return exe
}

// goCommand returns the path of the go command, skipping the test if
// there is none.
func goCommand(t testing.TB) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	return goCmd
}

var goroot = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	return strings.TrimSpace(string(out)), err
})

// goBinary returns the path of $(go env GOROOT)/bin/go.
func goBinary(t testing.TB) string {
	t.Helper()
	goCommand(t)
	root, err := goroot()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	p := filepath.Join(root, "bin", "go"+exeSuffix())
	if _, err := os.Stat(p); err != nil {
		t.Skip(err)
	}
	return p
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

var toolPaths sync.Map // name -> func() (string, error)

// goTool returns the path of the executable of "go tool name", built (and
// cached by the go command) on first use.
func goTool(t testing.TB, name string) string {
	t.Helper()
	goCmd := goCommand(t)
	v, _ := toolPaths.LoadOrStore(name, sync.OnceValues(func() (string, error) {
		out, err := exec.Command(goCmd, "tool", "-n", name).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = fmt.Errorf("%v\n%s", err, ee.Stderr)
			}
			return "", fmt.Errorf("go tool -n %s: %v", name, err)
		}
		return strings.TrimSpace(string(out)), nil
	}))
	p, err := v.(func() (string, error))()
	if err != nil {
		t.Skip(err)
	}
	return p
}

// runTool runs an executable with stdin and returns its standard output.
func runTool(t testing.TB, stdin string, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, errOut.Bytes())
	}
	return string(out)
}

// corpusDir holds the corpus binaries, written once per test process.
var corpusDir string

func TestMain(m *testing.M) {
	status := m.Run()
	if corpusDir != "" {
		os.RemoveAll(corpusDir)
	}
	os.Exit(status)
}

type corpusBinary struct {
	testcorpus.Entry
	Path string
}

var corpusOnce = sync.OnceValues(func() ([]corpusBinary, error) {
	entries, err := testcorpus.Entries()
	if err != nil {
		return nil, err
	}
	corpusDir, err = os.MkdirTemp("", "gosym-cmd-corpus-")
	if err != nil {
		return nil, err
	}
	var bins []corpusBinary
	for _, e := range entries {
		data, err := e.Binary()
		if err != nil {
			return nil, err
		}
		p := filepath.Join(corpusDir, e.Name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			return nil, err
		}
		bins = append(bins, corpusBinary{e, p})
	}
	return bins, nil
})

// corpus returns the corpus binaries, written to files.
func corpus(t testing.TB) []corpusBinary {
	t.Helper()
	bins, err := corpusOnce()
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) == 0 {
		t.Fatal("empty corpus")
	}
	return bins
}

// corpusEntry returns the corpus binary called name.
func corpusEntry(t testing.TB, name string) corpusBinary {
	t.Helper()
	for _, b := range corpus(t) {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("corpus has no %s", name)
	return corpusBinary{}
}

// openTable opens the Table of path for the duration of the test.
func openTable(t testing.TB, path string) *gosym.Table {
	t.Helper()
	tab, err := gosym.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

// stdlibBlind reports binaries whose Go symbol table debug/gosym (and so go
// tool addr2line) cannot find: it locates the pclntab of PE and Plan 9
// files through symbols only, which stripped ones lack.
func (b corpusBinary) stdlibBlind() bool {
	return !b.HasSymbols && (b.GOOS == "windows" || b.GOOS == "plan9")
}
