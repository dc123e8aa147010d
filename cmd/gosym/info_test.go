package main

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

func infoOf(t *testing.T, path string) infoJSON {
	t.Helper()
	var in infoJSON
	if err := json.Unmarshal([]byte(mustRun(t, "", "info", "-json", path)), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestInfoCorpus checks info against what the corpus builder recorded about
// each binary (with the standard library only), its self-report and
// debug/gosym.
func TestInfoCorpus(t *testing.T) {
	for _, b := range corpus(t) {
		t.Run(b.Name, func(t *testing.T) {
			in := infoOf(t, b.Path)
			data, err := os.ReadFile(b.Path)
			if err != nil {
				t.Fatal(err)
			}
			want := infoJSON{
				File:      b.Path,
				Format:    testcorpus.Format(data),
				Arch:      b.GOARCH,
				GoVersion: b.GoVersion,
				Magic:     b.PclntabMagic,
				PtrSize:   b.PtrSize,
				Quantum:   b.Quantum,
				ByteOrder: b.ByteOrder,
				Symbols:   b.HasSymbols,
				DWARF:     b.HasDWARF,
				Stripped:  !b.HasSymbols,
			}
			got := in
			// Not recorded by the builder; checked below.
			got.PclntabVersion, got.PclntabAddr, got.PclntabSize, got.FoundBy, got.ModuledataFoundBy = "", "", 0, "", ""
			got.Functions, got.Files, got.TextStart, got.TextEnd = 0, 0, "", ""
			// Checked by TestInfoGarbled; a corpus binary needs no repair.
			got.Validated = ""
			if got != want {
				t.Errorf("info:\n%+v\nwant\n%+v", got, want)
			}
			if wantVersion := map[uint32]string{
				testcorpus.Magic12: "1.2", testcorpus.Magic116: "1.16",
				testcorpus.Magic118: "1.18", testcorpus.Magic120: "1.20",
			}[b.Magic()]; in.PclntabVersion != wantVersion {
				t.Errorf("pclntab version %s, want %s", in.PclntabVersion, wantVersion)
			}
			if in.FoundBy == "" || (b.Minor() >= 18) != (in.ModuledataFoundBy != "") {
				t.Errorf("found by %q, moduledata found by %q", in.FoundBy, in.ModuledataFoundBy)
			}
			// The file table holds at least every file the line
			// tables name.
			tab, err := gosym.Open(b.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			if n, err := countFiles(tab); err != nil || in.Files < n {
				t.Errorf("files %d, line tables name %d (%v)", in.Files, n, err)
			}

			// The function count and text range: debug/gosym's function
			// table, and the runtime's own text range where the
			// self-report has one.
			if b.stdlibBlind() {
				return // debug/gosym cannot find the table of a stripped PE or Plan 9 file
			}
			std, err := oracle.NewStdlibPclntab(data)
			if err != nil {
				t.Fatal(err)
			}
			funcs := std.Funcs()
			if in.Functions != len(funcs) {
				t.Errorf("%d functions, debug/gosym has %d", in.Functions, len(funcs))
			}
			if len(funcs) > 0 && (in.TextStart != hex(funcs[0].Low) || in.TextEnd != hex(funcs[len(funcs)-1].High)) {
				t.Errorf("text %s-%s; debug/gosym's functions span %#x-%#x", in.TextStart, in.TextEnd, funcs[0].Low, funcs[len(funcs)-1].High)
			}
			if b.SelfReportFile != "" {
				rep, err := b.SelfReport()
				if err != nil {
					t.Fatal(err)
				}
				// The runtime's etext may lie past the end of the last
				// function (Go 1.24+: alignment after go:textfipsend).
				end, err := parseAddr(in.TextEnd)
				if err != nil || in.TextStart != hex(rep.Start) || end > rep.End || rep.End-end >= 64 {
					t.Errorf("text %s-%s; the runtime says %#x-%#x", in.TextStart, in.TextEnd, rep.Start, rep.End)
				}
			}
		})
	}
}

// TestInfoSelf checks info of the running test binary against the
// runtime, in text and JSON.
func TestInfoSelf(t *testing.T) {
	path := selfPath(t)
	in := infoOf(t, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// go test links with -s -w unless told otherwise: the test binary
	// is usually stripped.
	dwarf, symbols := testcorpus.HasDWARF(data)
	if in.GoVersion != runtime.Version() || in.Arch != runtime.GOARCH || in.PclntabVersion != "1.20" ||
		in.Symbols != symbols || in.Stripped == symbols || in.DWARF != dwarf ||
		in.Functions == 0 || in.Files == 0 {
		t.Errorf("info -json: %+v; dwarf %v, symbols %v", in, dwarf, symbols)
	}
	yesNo := map[bool]string{true: "yes", false: "no"}
	text := mustRun(t, "", "info", path)
	fields := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		label, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Errorf("info: line without a label: %q", line)
		}
		fields[label] = strings.TrimSpace(value)
	}
	for label, want := range map[string]string{
		"file":                path,
		"format":              in.Format,
		"arch":                runtime.GOARCH,
		"go version":          runtime.Version(),
		"pclntab":             fmt.Sprintf("Go 1.20 layout (magic %s, pointer size %d, quantum %d, %s-endian)", in.Magic, in.PtrSize, in.Quantum, in.ByteOrder),
		"pclntab at":          fmt.Sprintf("%s, %d bytes", in.PclntabAddr, in.PclntabSize),
		"pclntab found by":    in.FoundBy,
		"moduledata found by": in.ModuledataFoundBy,
		"functions":           fmt.Sprint(in.Functions),
		"files":               fmt.Sprint(in.Files),
		"symbols":             yesNo[symbols],
		"dwarf":               yesNo[dwarf],
		"stripped":            yesNo[!symbols],
	} {
		if fields[label] != want {
			t.Errorf("info says %s: %q, want %q", label, fields[label], want)
		}
	}
	if !strings.HasPrefix(fields["text"], in.TextStart+"-"+in.TextEnd+" (") {
		t.Errorf("info says text: %q", fields["text"])
	}
}

// TestInfoStripped checks a binary built with -ldflags="-s -w".
func TestInfoStripped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	path := objtest.Path(t, objtest.LinuxStripped)
	in := infoOf(t, path)
	if !in.Stripped || in.Symbols || in.DWARF || in.GoVersion != runtime.Version() || in.Functions == 0 {
		t.Errorf("info -json of a stripped binary: %+v", in)
	}
	if out := mustRun(t, "", "info", path); !strings.Contains(out, "stripped:            yes\n") {
		t.Errorf("info of a stripped binary:\n%s", out)
	}
}

// TestInfoStrippedDynsym checks a stripped binary whose dynamic symbol
// table (.dynsym) holds Go symbols: a cgo program that imports package
// plugin, for which the linker exports every symbol, built with
// -ldflags=-s, which drops .symtab but not .dynsym.
func TestInfoStrippedDynsym(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if testing.Short() {
		t.Skip("builds a cgo binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("builds an ELF binary with cgo")
	}
	goCmd := goCommand(t)
	if out, err := exec.Command(goCmd, "env", "CGO_ENABLED", "CC").Output(); err != nil {
		t.Skipf("go env: %v", err)
	} else if f := strings.Fields(string(out)); len(f) < 2 || f[0] != "1" {
		t.Skipf("cgo is not enabled: go env CGO_ENABLED CC: %q", out)
	} else if _, err := exec.LookPath(f[1]); err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module plugindemo\n\ngo 1.24\n",
		"main.go": "package main\n\nimport _ \"plugin\"\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "prog")
	cmd := exec.Command(goCmd, "build", "-ldflags=-s", "-o", path, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=", "GOARCH=", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The premise: no .symtab, and main.main in .dynsym.
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if syms, err := f.Symbols(); len(syms) > 0 || !errors.Is(err, elf.ErrNoSymbols) {
		t.Fatalf("the -ldflags=-s build has a symbol table of %d symbols (%v)", len(syms), err)
	}
	dyn, err := f.DynamicSymbols()
	if err != nil || !slices.ContainsFunc(dyn, func(s elf.Symbol) bool { return s.Name == "main.main" }) {
		t.Fatalf("the build has no main.main in .dynsym (%d symbols, %v): no test", len(dyn), err)
	}

	in := infoOf(t, path)
	if !in.Stripped || in.Symbols || in.DWARF || in.Functions == 0 {
		t.Errorf("info -json of a binary with only .dynsym: %+v", in)
	}
	out := mustRun(t, "", "info", path)
	if !strings.Contains(out, "\nsymbols:             no\n") || !strings.Contains(out, "\nstripped:            yes\n") {
		t.Errorf("info of a binary with only .dynsym:\n%s", out)
	}
}

// countFiles counts the distinct files of every function's line table.
func countFiles(tab *gosym.Table) (int, error) {
	files := make(map[string]bool)
	var lines []gosym.FunctionLine
	for fn, err := range tab.Functions() {
		if err != nil {
			return 0, err
		}
		lines, err = fn.Lines(lines)
		if err != nil {
			return 0, err
		}
		for _, l := range lines {
			if l.File != "" {
				files[l.File] = true
			}
		}
	}
	return len(files), nil
}
