package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// govulncheckVersion is the release of golang.org/x/vuln whose extraction
// (govulncheck -mode=extract) the symbols command is compared with.
const govulncheckVersion = "v1.9.0"

// govulncheck installs govulncheck from the module proxy, once, and
// returns its path.
var govulncheck = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(os.TempDir(), "gosym-govulncheck-"+govulncheckVersion)
	exe := filepath.Join(dir, "govulncheck")
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	cmd := exec.Command("go", "install", "golang.org/x/vuln/cmd/govulncheck@"+govulncheckVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install govulncheck: %v\n%s", err, out)
	}
	return exe, nil
})

// extractSymbols returns the (package, symbol) pairs govulncheck
// -mode=extract reports for the binary at path, and its symbols without
// a package.
func extractSymbols(t *testing.T, path string) (pairs map[[2]string]bool, noPkg []string) {
	exe, err := govulncheck()
	if err != nil {
		t.Skipf("govulncheck is not available (the module proxy is needed): %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(exe, "-mode=extract", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if strings.Contains(stderr.String(), "unrecognized binary format") {
		// It fails on some binaries gosym reads (Go 1.13–1.17, Plan 9,
		// Windows, s390x among those of the corpus).
		t.Logf("govulncheck cannot read it: %s", strings.TrimSpace(stderr.String()))
		return nil, nil
	}
	if err != nil {
		t.Fatalf("govulncheck -mode=extract %s: %v\n%s", path, err, stderr.Bytes())
	}
	pairs = map[[2]string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var blob struct {
			PkgSymbols []struct {
				Pkg  string `json:"pkg"`
				Name string `json:"name"`
			} `json:"pkgSymbols"`
		}
		if err := json.Unmarshal(sc.Bytes(), &blob); err != nil {
			t.Fatalf("govulncheck output: %v", err)
		}
		for _, s := range blob.PkgSymbols {
			if s.Pkg == "" {
				noPkg = append(noPkg, s.Name)
				continue
			}
			pairs[[2]string{s.Pkg, s.Name}] = true
		}
	}
	return pairs, noPkg
}

// TestSymbolsGovulncheck compares symbols with govulncheck's own
// extraction on the corpus: every well-formed (package, symbol) pair it
// reports, symbols reports too. Its malformed pairs are counted by kind,
// and for each the well-formed pair is among ours:
//
//   - paren: a method of a pointer receiver nested in another name, such
//     as a closure of an inlined method ("fmt.(*pp).handleMethods.deferwrap1"
//     gives "pp).handleMethods.deferwrap1");
//   - typeargs: a receiver's type arguments written twice
//     ("Box[go.shape.int].go.shape.int].Get");
//   - unbalanced: other names with brackets that do not match (a
//     range-over-func body of a generic function inlined into another);
//   - nopkg: a closure of an inlined function filed under package "_".
//
// govulncheck reads build info, so binaries built before Go 1.13 give it
// nothing to compare.
func TestSymbolsGovulncheck(t *testing.T) {
	if os.Getenv(testcorpus.DirEnv) == "" {
		objtest.SkipUnlessHeavy(t) // builds govulncheck; the differential phase runs it on the full matrix
	}
	for _, b := range corpus(t) {
		t.Run(b.Name, func(t *testing.T) { compareGovulncheck(t, b.Path) })
	}
	t.Run("go", func(t *testing.T) {
		compareGovulncheck(t, goBinary(t))
	})
}

func compareGovulncheck(t *testing.T, path string) {
	theirs, noPkg := extractSymbols(t, path)
	var got symbolsJSON
	if err := json.Unmarshal([]byte(mustRun(t, "", "symbols", "-json", path)), &got); err != nil {
		t.Fatal(err)
	}
	ours := map[[2]string]bool{}
	unparened := map[[2]string]bool{} // ours with fixParens
	bySym := map[string][]string{}    // symbol -> packages
	n := 0
	for _, p := range got.Packages {
		for _, s := range p.Symbols {
			ours[[2]string{p.Path, s.Name}] = true
			unparened[[2]string{p.Path, fixParens(s.Name)}] = true
			bySym[s.Name] = append(bySym[s.Name], p.Path)
			n++
		}
	}
	kinds := map[string]int{}
	for pair := range theirs {
		if ours[pair] {
			kinds["same"]++
			continue
		}
		pkg, name := pair[0], pair[1]
		switch {
		case pkg == "_" && anySuffix(bySym, "."+name):
			kinds["nopkg"]++
		case strings.Contains(name, ")") && (unparened[[2]string{pkg, fixParens(name)}] || anySuffixIn(unparened, pkg, fixParens(name))):
			kinds["paren"]++
		case ours[[2]string{pkg, fixDoubled(name)}]:
			kinds["typeargs"]++
		case !balanced(name) && anyPrefixIn(ours, pkg, name[:strings.IndexByte(name, '[')+1]):
			kinds["unbalanced"]++
		default:
			kinds["missing"]++
			if kinds["missing"] <= 10 {
				t.Errorf("govulncheck reports %s %s; symbols does not", pkg, name)
			}
		}
	}
	// Its symbols without a package: ours without one, or ours in a
	// package (where it failed to find one: "Pointer[...].Load").
	for _, name := range noPkg {
		switch pkgs := bySym[name]; {
		case slices.Contains(pkgs, ""):
			kinds["nopkg-same"]++ // assembly and C functions
		case len(pkgs) > 0:
			kinds["nopkg-ours-in-package"]++
		case anySuffix(bySym, "."+name):
			kinds["nopkg-suffix"]++ // "eq.T" for "type:.eq.T", ...
		case !balanced(name):
			kinds["nopkg-unbalanced"]++ // parts of a type:.eq name written twice
		default:
			kinds["nopkg-missing"]++
			if kinds["nopkg-missing"] <= 10 {
				t.Errorf("govulncheck reports %s without a package; symbols has no such symbol", name)
			}
		}
	}
	t.Logf("%d symbols; govulncheck: %d pairs and %d without a package: %v", n, len(theirs), len(noPkg), kinds)
}

// fixDoubled removes the type arguments govulncheck writes twice:
// "uniqueMap[net/netip.addrDetail].net/netip.addrDetail].Load" gives
// "uniqueMap[net/netip.addrDetail].Load".
func fixDoubled(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] != '[' {
			continue
		}
		depth := 0
		for j := i; j < len(name); j++ {
			switch name[j] {
			case '[':
				depth++
			case ']':
				depth--
			}
			if depth == 0 {
				dup := "." + name[i+1:j] + "]"
				if strings.HasPrefix(name[j+1:], dup) {
					return name[:j+1] + name[j+1+len(dup):]
				}
				break
			}
		}
	}
	return name
}

// balanced reports whether the brackets and parentheses of name match.
func balanced(name string) bool {
	var stack []byte
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '[', '(':
			stack = append(stack, c)
		case ']', ')':
			if len(stack) == 0 || stack[len(stack)-1] != map[byte]byte{']': '[', ')': '('}[c] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0
}

func anyPrefixIn(ours map[[2]string]bool, pkg, prefix string) bool {
	for p := range ours {
		if p[0] == pkg && strings.HasPrefix(p[1], prefix) {
			return true
		}
	}
	return false
}

// fixParens turns govulncheck's "pp).handleMethods.deferwrap1" into
// "pp.handleMethods.deferwrap1".
func fixParens(name string) string {
	return strings.NewReplacer("(*", "", "(", "", ")", "").Replace(name)
}

func anySuffix(bySym map[string][]string, suffix string) bool {
	for s := range bySym {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

func anySuffixIn(ours map[[2]string]bool, pkg, suffix string) bool {
	for p := range ours {
		if p[0] == pkg && strings.HasSuffix(p[1], "."+suffix) {
			return true
		}
	}
	return false
}

// TestSymbolsModules checks the module of each package that symbols
// reports for this test binary, which links this module and
// golang.org/x/arch, against go list.
func TestSymbolsModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}\t{{if .Module}}{{.Module.Path}}{{else if .Standard}}std{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg, mod, ok := strings.Cut(l, "\t"); ok {
			want[pkg] = mod
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var got symbolsJSON
	if err := json.Unmarshal([]byte(mustRun(t, "", "symbols", "-json", exe)), &got); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range got.Packages {
		w, ok := want[p.Path]
		if !ok || p.Path == "main" {
			continue // go list names the test's main package otherwise
		}
		checked++
		if p.Module != w {
			t.Errorf("package %s: module %q, go list says %q", p.Path, p.Module, w)
		}
	}
	if checked < 20 {
		t.Errorf("only %d packages checked", checked)
	}
	for _, m := range []string{"github.com/gosym-dev/gosym", "golang.org/x/arch"} {
		if !slices.ContainsFunc(got.Modules, func(g moduleJSON) bool { return g.Path == m }) {
			t.Errorf("modules %v lack %s", got.Modules, m)
		}
	}
}

// TestLookupSameName asks a command for a function by a name several
// functions share and by a name that exists only inlined.
func TestLookupSameName(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	tab := openTable(t, b.Path)
	counts := map[string]int{}
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		counts[f.Name()]++
	}
	shared := ""
	for name, n := range counts {
		if n > 1 && (shared == "" || name < shared) {
			shared = name
		}
	}
	if shared == "" {
		t.Fatal("no name shared by several functions")
	}
	_, errOut, status := gosymCmd(t, "", "lines", b.Path, shared)
	if status != exitError || !strings.Contains(errOut, fmt.Sprintf("%d functions are called", counts[shared])) {
		t.Errorf("lines %s: status %d, %s", shared, status, errOut)
	}
	for f := range tab.LookupFunctions(shared) {
		if !strings.Contains(errOut, fmt.Sprintf("%#x", f.Entry())) {
			t.Errorf("the error does not list %#x", f.Entry())
		}
		mustRun(t, "", "lines", b.Path, fmt.Sprintf("%#x", f.Entry()))
	}

	// main.sumOf is generic and inlined wherever it is called.
	_, errOut, status = gosymCmd(t, "", "lines", b.Path, "main.sumOf")
	if status != exitError || !strings.Contains(errOut, "exists only inlined, into:\n\tmain.generics (") {
		t.Errorf("lines main.sumOf: status %d, %s", status, errOut)
	}
}
