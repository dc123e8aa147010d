// Package garbletest builds programs with garble (mvdan.cc/garble), for
// the tests that read garbled binaries against the garbled program's own
// runtime.CallersFrames self-report (TESTING.md, "Day zero and hidden
// tables").
//
// garble patches the linker and the runtime: it writes a random pclntab
// magic and stores each function record's entry offset XORed with its
// name offset times a key. It refuses a GOROOT inside the module cache, so
// Setup (v0.18.0 with go1.27.3) and SetupVersion (any garble release with
// the Go release it needs, Releases) copy the toolchain (fetched into the
// module cache through GOTOOLCHAIN if needed) to a directory of their own
// under the user cache directory, and install garble there with it. Both
// are kept for later runs.
package garbletest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Versions of the toolchain and of garble that Setup installs: the
// newest garble release and the toolchain it builds with.
const (
	GoVersion     = "go1.27.3"
	GarbleVersion = "v0.18.0"
)

// A Release is a garble release and the Go release it builds with.
type Release struct {
	Garble string // garble's version, as the module proxy serves it ("v0.15.0")
	Go     string // the toolchain's version ("go1.25.14")
}

// Releases are the garble releases the module proxy serves, oldest
// first, each with the newest Go release it supports (its go.mod's go
// line and main.go's minGoVersion and unsupportedGo): v0.15.0 builds with
// Go 1.25, v0.16.0 and v0.17.0 with Go 1.26 (1.26.2 or newer), v0.18.0
// with Go 1.27.
var Releases = []Release{
	{"v0.15.0", "go1.25.14"},
	{"v0.16.0", "go1.26.8"},
	{"v0.17.0", "go1.26.8"},
	{GarbleVersion, GoVersion},
}

// Env is an installed garble and the toolchain it builds with.
type Env struct {
	Release
	GOROOT string // the toolchain's copy, outside the module cache
	Garble string // the garble executable
}

var setup struct {
	mu   sync.Mutex
	envs map[Release]*setupResult
}

type setupResult struct {
	once sync.Once
	env  *Env
	err  error
}

// Setup returns the environment of garble v0.18.0 and go1.27.3,
// installing it on first use (this needs the Go module proxy once). It
// skips tb if there is no go command.
func Setup(tb testing.TB) *Env {
	tb.Helper()
	return SetupVersion(tb, GarbleVersion, GoVersion)
}

// SetupVersion is Setup for garble version garble (such as "v0.15.0")
// built with, and building with, the Go release goVersion (such as
// "go1.25.14"). Each pair is installed once, in a directory of its own
// under the user cache directory, and kept for later runs.
func SetupVersion(tb testing.TB, garble, goVersion string) *Env {
	tb.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("no go command: %v", err)
	}
	r := Release{garble, goVersion}
	setup.mu.Lock()
	if setup.envs == nil {
		setup.envs = map[Release]*setupResult{}
	}
	res := setup.envs[r]
	if res == nil {
		res = new(setupResult)
		setup.envs[r] = res
	}
	setup.mu.Unlock()
	res.once.Do(func() { res.env, res.err = install(goCmd, r) })
	if res.err != nil {
		tb.Fatalf("installing garble %s with %s: %v", garble, goVersion, res.err)
	}
	return res.env
}

func install(goCmd string, r Release) (*Env, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "gosym-garbletest", r.Go+"-garble-"+r.Garble)
	env := &Env{Release: r, GOROOT: filepath.Join(dir, "go"), Garble: filepath.Join(dir, "bin", "garble")}
	if _, err := os.Stat(env.Garble); err == nil {
		return env, nil
	}
	// The toolchain from the module cache, downloaded if needed.
	cmd := exec.Command(goCmd, "env", "GOROOT")
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+r.Go, "GOFLAGS=")
	cmd.Dir = os.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("GOTOOLCHAIN=%s go env GOROOT: %v\n%s", r.Go, err, out)
	}
	src := strings.TrimSpace(string(out))
	tmp := env.GOROOT + ".tmp"
	os.RemoveAll(tmp)
	if err := copyTree(src, tmp); err != nil {
		return nil, err
	}
	os.RemoveAll(env.GOROOT)
	if err := os.Rename(tmp, env.GOROOT); err != nil {
		return nil, err
	}
	cmd = exec.Command(filepath.Join(env.GOROOT, "bin", "go"), "install", "mvdan.cc/garble@"+r.Garble)
	cmd.Env = env.environ("GOBIN=" + filepath.Join(dir, "bin"))
	cmd.Dir = os.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go install mvdan.cc/garble@%s: %v\n%s", r.Garble, err, out)
	}
	return env, nil
}

// environ returns the environment for the toolchain copy, building for
// linux/amd64.
func (e *Env) environ(extra ...string) []string {
	return e.environFor("linux", "amd64", extra...)
}

// environFor returns the environment for the toolchain copy, building
// for goos/goarch.
func (e *Env) environFor(goos, goarch string, extra ...string) []string {
	env := []string{
		"PATH=" + filepath.Join(e.GOROOT, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GOTOOLCHAIN=local", "GOROOT=" + e.GOROOT, "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0",
		"GOOS=" + goos, "GOARCH=" + goarch,
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "GOTOOLCHAIN", "GOROOT", "GOFLAGS", "GOWORK", "CGO_ENABLED", "GOOS", "GOARCH":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// Build builds the package in dir (a module) with garble and the given
// garble flags (-literals, -tiny, -seed=...) and build flags (such as
// -ldflags=-s -w), and returns the executable's path, in a temporary
// directory of tb.
func (e *Env) Build(tb testing.TB, dir string, garbleFlags, buildFlags []string) string {
	tb.Helper()
	return e.BuildFor(tb, "linux", "amd64", dir, garbleFlags, buildFlags)
}

// BuildFor is Build for the target goos/goarch (garble builds the
// standard library for it too, once per seed and target, which takes
// minutes).
func (e *Env) BuildFor(tb testing.TB, goos, goarch, dir string, garbleFlags, buildFlags []string) string {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "garbled-"+goos+"-"+goarch)
	args := append(append(append([]string{}, garbleFlags...), "build", "-o", out), buildFlags...)
	cmd := exec.Command(e.Garble, append(args, ".")...)
	cmd.Dir = dir
	cmd.Env = e.environFor(goos, goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("GOOS=%s GOARCH=%s garble %s: %v\n%s", goos, goarch, strings.Join(args, " "), err, b)
	}
	return out
}

// GoBuild builds the package in dir with the toolchain copy alone (no
// garble) for linux/amd64: the unobfuscated twin of a garbled build.
func (e *Env) GoBuild(tb testing.TB, dir string, buildFlags []string) string {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "plain")
	args := append(append([]string{"build", "-o", out}, buildFlags...), ".")
	cmd := exec.Command(filepath.Join(e.GOROOT, "bin", "go"), args...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// StdPackages returns the import paths of the toolchain's standard
// library packages for goos/goarch (go list std). garble keeps their
// paths; it obfuscates the paths of every other package but main.
func (e *Env) StdPackages(tb testing.TB, goos, goarch string) map[string]bool {
	tb.Helper()
	cmd := exec.Command(filepath.Join(e.GOROOT, "bin", "go"), "list", "std")
	cmd.Dir = os.TempDir()
	cmd.Env = e.environFor(goos, goarch)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list std: %v", err)
	}
	std := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		std[p] = true
	}
	return std
}

// Reverse runs "garble reverse" with the given garble flags (the build's
// -seed and the like, which must be the build's) in the module dir on
// text, for linux/amd64, and returns its output: the text with the
// obfuscated names and positions that garble can map replaced by the
// original ones.
func (e *Env) Reverse(tb testing.TB, dir string, garbleFlags []string, text []byte) []byte {
	tb.Helper()
	in := filepath.Join(tb.TempDir(), "reverse-input.txt")
	if err := os.WriteFile(in, text, 0o644); err != nil {
		tb.Fatal(err)
	}
	args := append(append([]string{}, garbleFlags...), "reverse", ".", in)
	cmd := exec.Command(e.Garble, args...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		tb.Fatalf("garble %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// CopyModule copies the directory src to a temporary directory of tb with
// a go.mod declaring module mod and Go 1.27, and returns it.
func CopyModule(tb testing.TB, src, mod string) string {
	tb.Helper()
	return copyModule(tb, src, mod, "1.27")
}

// CopyModule copies the directory src to a temporary directory of tb with
// a go.mod declaring module mod and the language version of e's
// toolchain (go1.25.14 reads "go 1.25"), and returns it.
func (e *Env) CopyModule(tb testing.TB, src, mod string) string {
	tb.Helper()
	v := strings.TrimPrefix(e.Go, "go")
	if i := strings.Index(v, "."); i >= 0 {
		if j := strings.Index(v[i+1:], "."); j >= 0 {
			v = v[:i+1+j]
		}
	}
	return copyModule(tb, src, mod, v)
}

func copyModule(tb testing.TB, src, mod, goLine string) string {
	tb.Helper()
	dst := tb.TempDir()
	if err := copyTree(src, dst); err != nil {
		tb.Fatal(err)
	}
	gomod := fmt.Sprintf("module %s\n\ngo %s\n", mod, goLine)
	if err := os.WriteFile(filepath.Join(dst, "go.mod"), []byte(gomod), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// copyTree copies the regular files and directories under src to dst,
// keeping execute bits and making everything writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm()|0o200)
	})
}
