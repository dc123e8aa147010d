// Package objtest helps test the object backends: it builds small Go
// programs for many targets with the installed toolchain (once per test
// process), makes variants of them (ELF without section headers, Mach-O
// universal files), checks the invariants every Object must keep, and
// holds the tests' shared parts: reading a file with the standard library
// and with a backend side by side ([Backend]), and comparing the sections
// and symbols they find.
package objtest

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A Target is one build of the test program.
type Target struct {
	GOOS, GOARCH string
	Flags        []string // extra flags for go build
	Name         string   // unique; GOOS_GOARCH plus a suffix for Flags
}

func (t Target) String() string { return t.Name }

// ByteOrder returns the byte order of t's architecture.
func (t Target) ByteOrder() binary.ByteOrder {
	switch t.GOARCH {
	case "ppc64", "s390x", "mips", "mips64":
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// The targets the backend tests build.
var (
	LinuxAMD64    = Target{GOOS: "linux", GOARCH: "amd64", Name: "linux_amd64"}
	Linux386      = Target{GOOS: "linux", GOARCH: "386", Name: "linux_386"}
	LinuxARM64    = Target{GOOS: "linux", GOARCH: "arm64", Name: "linux_arm64"}
	LinuxPPC64    = Target{GOOS: "linux", GOARCH: "ppc64", Name: "linux_ppc64"}
	LinuxS390X    = Target{GOOS: "linux", GOARCH: "s390x", Name: "linux_s390x"}
	LinuxPIE      = Target{GOOS: "linux", GOARCH: "amd64", Flags: []string{"-buildmode=pie"}, Name: "linux_amd64_pie"}
	LinuxStripped = Target{GOOS: "linux", GOARCH: "amd64", Flags: []string{"-ldflags=-s -w"}, Name: "linux_amd64_sw"}
	DarwinAMD64   = Target{GOOS: "darwin", GOARCH: "amd64", Name: "darwin_amd64"}
	DarwinARM64   = Target{GOOS: "darwin", GOARCH: "arm64", Name: "darwin_arm64"}
	WindowsAMD64  = Target{GOOS: "windows", GOARCH: "amd64", Name: "windows_amd64"}
	Windows386    = Target{GOOS: "windows", GOARCH: "386", Name: "windows_386"}
	Plan9AMD64    = Target{GOOS: "plan9", GOARCH: "amd64", Name: "plan9_amd64"}
	Plan9386      = Target{GOOS: "plan9", GOARCH: "386", Name: "plan9_386"}
	AIXPPC64      = Target{GOOS: "aix", GOARCH: "ppc64", Name: "aix_ppc64"}
	AIXStripped   = Target{GOOS: "aix", GOARCH: "ppc64", Flags: []string{"-ldflags=-s -w"}, Name: "aix_ppc64_sw"}
	JSWasm        = Target{GOOS: "js", GOARCH: "wasm", Name: "js_wasm"}
	WASIP1Wasm    = Target{GOOS: "wasip1", GOARCH: "wasm", Name: "wasip1_wasm"}
)

// ELF, MachO, PE, Plan9, XCOFF and Wasm list the targets of each format.
var (
	ELF   = []Target{LinuxAMD64, Linux386, LinuxARM64, LinuxPPC64, LinuxS390X, LinuxPIE, LinuxStripped}
	MachO = []Target{DarwinAMD64, DarwinARM64}
	PE    = []Target{WindowsAMD64, Windows386}
	Plan9 = []Target{Plan9AMD64, Plan9386}
	XCOFF = []Target{AIXPPC64, AIXStripped}
	Wasm  = []Target{JSWasm, WASIP1Wasm}
)

// program is the test program: small, with a few symbols worth finding.
const program = `package main

var counter int

//go:noinline
func work(n int) int {
	for i := range n {
		counter += i
	}
	return counter
}

func main() { println("hello", work(3)) }
`

type build struct {
	once sync.Once
	data []byte
	err  error
}

var builds sync.Map // Target.Name -> *build

// Binary returns the test program built for t, building it on first use.
// The bytes are shared and must not be modified. It skips the test if
// there is no go command.
func Binary(tb testing.TB, t Target) []byte {
	tb.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("no go command: %v", err)
	}
	v, _ := builds.LoadOrStore(t.Name, new(build))
	b := v.(*build)
	b.once.Do(func() { b.data, b.err = goBuild(goCmd, t) })
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.data
}

// goBuild builds the program for t in a temporary directory and returns
// the executable's bytes.
func goBuild(goCmd string, t Target) ([]byte, error) {
	dir, err := os.MkdirTemp("", "objtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o666); err != nil {
		return nil, err
	}
	args := append([]string{"build", "-o", "prog"}, t.Flags...)
	cmd := exec.Command(goCmd, append(args, "main.go")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOOS="+t.GOOS, "GOARCH="+t.GOARCH,
		"CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go %s for %s: %v\n%s", strings.Join(args, " "), t.Name, err, out)
	}
	return os.ReadFile(filepath.Join(dir, "prog"))
}

// Run runs test in a parallel subtest for each target, on the test program
// built for it.
func Run(t *testing.T, targets []Target, test func(t *testing.T, tg Target, data []byte)) {
	for _, tg := range targets {
		t.Run(tg.Name, func(t *testing.T) {
			t.Parallel()
			test(t, tg, Binary(t, tg))
		})
	}
}

// Path writes the test program built for t into a temporary directory of
// tb and returns its name.
func Path(tb testing.TB, t Target) string {
	tb.Helper()
	name := filepath.Join(tb.TempDir(), t.Name)
	if err := os.WriteFile(name, Binary(tb, t), 0o755); err != nil {
		tb.Fatal(err)
	}
	return name
}
