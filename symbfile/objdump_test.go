package symbfile

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// objdumpCalls runs go tool objdump (an outside oracle: the toolchain's
// own disassembler) on the binary at path and returns the address after
// every call instruction it prints (CALL and LCALL; ARM's BL and BLX, in
// any condition; the branch-and-link forms ppc64 code has no CALL
// spelling for, BCLRL and BCL), computed from the instruction bytes it
// prints.
func objdumpCalls(t *testing.T, path string) map[uint64]bool {
	t.Helper()
	cmd := exec.Command("go", "tool", "objdump", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool objdump %s: %v\n%s", path, err, stderr.Bytes())
	}
	rets := map[uint64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f []string
		for _, s := range strings.Split(sc.Text(), "\t") {
			if s = strings.TrimSpace(s); s != "" {
				f = append(f, s)
			}
		}
		if len(f) < 4 || !strings.HasPrefix(f[1], "0x") {
			continue
		}
		// Prefixes come first, each with a ";": "REPNE; CALL 0x...".
		op, rest, _ := strings.Cut(f[3], " ")
		for strings.HasSuffix(op, ";") {
			op, rest, _ = strings.Cut(rest, " ")
		}
		base, _, _ := strings.Cut(op, ".")
		switch base {
		case "CALL", "LCALL", "BL", "BLX", "BCLRL", "BCL":
		default:
			continue
		}
		addr, err := strconv.ParseUint(f[1][2:], 16, 64)
		if err != nil {
			t.Fatalf("objdump line %q: %v", sc.Text(), err)
		}
		rets[addr+uint64(len(f[2])/2)] = true
	}
	if len(rets) == 0 {
		t.Fatalf("go tool objdump %s: no call instruction", path)
	}
	return rets
}

// checkPadsObjdump checks the return pads written for the binary at path
// against go tool objdump: every pad is at the address after a call
// instruction, minus 1; and every call instruction inside a Go function
// has its pad.
func checkPadsObjdump(t *testing.T, tab *gosym.Table, path string) {
	t.Helper()
	rets := objdumpCalls(t, path)
	r := newReader(t, writeBytes(t, tab, WithReturnPads(true)))
	pads := map[uint64]bool{}
	for _, p := range r.pads {
		pads[p.va+1] = true
		if !rets[p.va+1] {
			t.Errorf("return pad at %#x: objdump shows no call instruction ending at %#x", p.va, p.va+1)
		}
	}
	missing := 0
	for ret := range rets {
		if f, err := tab.ResolveFunction(ret - 1); err != nil || ret > f.CodeEnd() || pads[ret] {
			continue
		}
		if missing++; missing <= 10 {
			t.Errorf("no return pad at %#x, after a call instruction objdump shows", ret-1)
		}
	}
	t.Logf("%d return pads, %d calls in objdump's output, %d missing", len(pads), len(rets), missing)
}

// TestReturnPadsObjdumpToolchain checks the go binary of the installed
// toolchain (test binaries have no symbol table, which objdump needs).
func TestReturnPadsObjdumpToolchain(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	path := toolBinary(t)
	checkPadsObjdump(t, openTable(t, path), path)
}

// TestReturnPadsObjdumpCorpus checks the corpus binaries with a symbol
// table (go tool objdump needs one), the first of each architecture
// return pads are found for (amd64, 386, arm64, arm, ppc64), and the
// newest amd64 one.
func TestReturnPadsObjdumpCorpus(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for _, e := range entries {
		if !padArch(e) || !e.HasSymbols || e.Variant == "pie" || e.GOOS == "plan9" || done[e.GOARCH] && e.Name != "go1.26.8.linux-amd64" {
			continue
		}
		done[e.GOARCH] = true
		t.Run(e.Name, func(t *testing.T) {
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "bin")
			if err := os.WriteFile(path, bin, 0o644); err != nil {
				t.Fatal(err)
			}
			obj, err := object.NewBytes(bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := gosym.NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			checkPadsObjdump(t, tab, path)
		})
	}
	for _, arch := range []string{"amd64", "386", "arm64", "arm"} {
		if !done[arch] {
			t.Errorf("no corpus binary of %s checked", arch)
		}
	}
}
