package objtest

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// WasmHighPCBase is the release WasmHighPCToolchain patches.
const WasmHighPCBase = "go1.27.4"

// wasmHighPCPatch is Go 1.28's WebAssembly PC rule for WasmHighPCBase
// (FORMAT.md, "WebAssembly").
//
//go:embed go1.27.4-wasmhighpc.patch
var wasmHighPCPatch []byte

var wasmHighPC struct {
	once sync.Once
	root string
	err  error
}

// WasmHighPCToolchain returns the GOROOT of a copy of Go 1.27.4 patched
// with go1.27.4-wasmhighpc.patch: its linker and runtime give every
// WebAssembly PC bit 63 and no 0x1000 bias, as Go 1.28's do. The copy is
// made once per patch, in the user cache directory (gosym/ there, named by
// the release and the patch's hash), from the module cache's toolchain
// (Toolchain), and its cmd/link is rebuilt; a later call, or a later test
// run, finds it there. This takes a minute or two on a cold machine.
func WasmHighPCToolchain(tb testing.TB) string {
	tb.Helper()
	base := Toolchain(tb, WasmHighPCBase)
	wasmHighPC.once.Do(func() {
		wasmHighPC.root, wasmHighPC.err = patchToolchain(WasmHighPCBase+"-wasmhighpc", base, wasmHighPCPatch)
	})
	if wasmHighPC.err != nil {
		tb.Fatal(wasmHighPC.err)
	}
	return wasmHighPC.root
}

// patchToolchain copies the toolchain at base, applies patch (a unified
// diff of paths under GOROOT, -p1) and rebuilds cmd/link, and returns the
// copy's GOROOT, named name and the patch's hash. A finished copy is
// marked by a file "gosym-patched".
func patchToolchain(name, base string, patch []byte) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(patch)
	root := filepath.Join(cache, "gosym", name+"-"+hex.EncodeToString(sum[:6]))
	done := filepath.Join(root, "gosym-patched")
	if _, err := os.Stat(done); err == nil {
		return root, nil
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(root), filepath.Base(root)+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "go")
	// CopyFS makes the files writable (0o666 and the execute bits).
	if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
		return "", fmt.Errorf("copying %s: %v", base, err)
	}
	pf := filepath.Join(tmp, "toolchain.patch")
	if err := os.WriteFile(pf, patch, 0o644); err != nil {
		return "", err
	}
	run := func(name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		// GIT_CEILING_DIRECTORIES: git apply in no repository around the copy.
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+tmp, "GOROOT="+dir, "GOTOOLCHAIN=local", "GOFLAGS=", "GOENV=off", "GOCACHE="+goCache())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %v in %s: %v\n%s", name, args, dir, err, out)
		}
		return nil
	}
	if err := run("git", "apply", "-p1", pf); err != nil {
		return "", err
	}
	link := filepath.Join(dir, "pkg", "tool", runtime.GOOS+"_"+runtime.GOARCH, "link")
	if err := run(filepath.Join(dir, "bin", "go"), "build", "-o", link, "cmd/link"); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "gosym-patched"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(dir, root); err != nil {
		// Another process finished first: use its copy.
		if _, err2 := os.Stat(done); err2 != nil {
			return "", err
		}
	}
	return root, nil
}
