package objtest

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Releases returns the Go releases a test of many releases builds with:
// the space-separated list in the environment variable GOSYM_RELEASES,
// else only the installed one ("" stands for it).
func Releases() []string {
	if v := strings.Fields(os.Getenv("GOSYM_RELEASES")); len(v) > 0 {
		return v
	}
	return []string{""}
}

var toolchains sync.Map // release -> *toolchainResult

type toolchainResult struct {
	once sync.Once
	root string
	err  error
}

// Toolchain returns the GOROOT of Go release v ("go1.21.13"): the
// installed toolchain for "" or the installed release, else the module
// golang.org/toolchain for linux/amd64 from the module cache, downloaded
// by go mod download if needed (as internal/corpus fetches them), with
// execute bits set as the go command does on first use. It skips the test
// if there is no go command.
func Toolchain(tb testing.TB, v string) string {
	tb.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("no go command: %v", err)
	}
	r, _ := toolchains.LoadOrStore(v, new(toolchainResult))
	t := r.(*toolchainResult)
	t.once.Do(func() { t.root, t.err = fetchToolchain(goCmd, v) })
	if t.err != nil {
		tb.Fatal(t.err)
	}
	return t.root
}

func fetchToolchain(goCmd, v string) (string, error) {
	out, err := exec.Command(goCmd, "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(out))
	if v == "" || len(f) == 2 && f[1] == v {
		return f[0], nil
	}
	mod := "golang.org/toolchain@v0.0.1-" + v + "." + runtime.GOOS + "-" + runtime.GOARCH
	cmd := exec.Command(goCmd, "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err = cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Error != "" || info.Dir == "" {
		return "", &exec.Error{Name: "go mod download " + mod, Err: errorString(string(bytes.TrimSpace(out)) + info.Error)}
	}
	for _, sub := range []string{"pkg/tool", "bin"} {
		filepath.WalkDir(filepath.Join(info.Dir, sub), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := os.Stat(path); err == nil && fi.Mode()&0o111 == 0 {
					os.Chmod(path, fi.Mode()&0o777|0o111)
				}
			}
			return nil
		})
	}
	return info.Dir, err
}

type errorString string

func (e errorString) Error() string { return string(e) }

// BuildGosymtest builds the corpus's test program (testdata/src,
// GOPATH mode) with the toolchain at goroot for goos/goarch, with extra
// files added to (or, for a nil content, removed from) its main package,
// and returns the executable's path, in a temporary directory of tb.
// repo is the repository's root.
func BuildGosymtest(tb testing.TB, repo, goroot, goos, goarch string, flags []string, extra map[string][]byte) string {
	tb.Helper()
	dir := tb.TempDir()
	src := filepath.Join(repo, "testdata", "src", "gopath")
	if err := os.CopyFS(filepath.Join(dir, "gopath"), os.DirFS(src)); err != nil {
		tb.Fatal(err)
	}
	pkg := filepath.Join(dir, "gopath", "src", "gosymtest")
	for name, data := range extra {
		var err error
		if data == nil {
			err = os.Remove(filepath.Join(pkg, name))
		} else {
			err = os.WriteFile(filepath.Join(pkg, name), data, 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "gosymtest."+goos+"-"+goarch)
	args := append([]string{"build", "-o", exe}, flags...)
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), append(args, ".")...)
	cmd.Dir = pkg
	cmd.Env = []string{
		"PATH=" + filepath.Join(goroot, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"GOROOT=" + goroot,
		"GOPATH=" + filepath.Join(dir, "gopath"),
		"GOCACHE=" + goCache(),
		"GOENV=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off", "GO111MODULE=off",
		"CGO_ENABLED=0", "GOOS=" + goos, "GOARCH=" + goarch,
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build (%s, %s/%s): %v\n%s", goroot, goos, goarch, err, out)
	}
	return exe
}

// goCache returns the build cache of the installed go command.
func goCache() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return filepath.Join(os.TempDir(), "gosym-gocache")
	}
	return strings.TrimSpace(string(out))
}

// ToolchainVersion returns the release of the toolchain at goroot
// ("go1.21.13"), from its VERSION file.
func ToolchainVersion(tb testing.TB, goroot string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		tb.Fatal(err)
	}
	v, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(v)
}
