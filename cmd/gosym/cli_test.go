package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/binary"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// usageLine returns the first line of the usage of the command name, from
// its section of the command doc.
func usageLine(t *testing.T, name string) string {
	t.Helper()
	usage, _, err := commandDoc(name)
	if err != nil {
		t.Fatal(err)
	}
	return "usage: " + usage + "\n"
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nosuchcommand"}, {"-x"}} {
		out, errOut, status := gosymCmd(t, "", args...)
		if status != 2 || out != "" || !strings.Contains(errOut, "usage: gosym <command>") {
			t.Errorf("gosym %q: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"--help"}} {
		out, errOut, status := gosymCmd(t, "", args...)
		if status != 0 || errOut != "" || !strings.HasPrefix(out, "usage: gosym <command>") {
			t.Errorf("gosym %q: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	for _, c := range commands {
		name := c.name
		want := usageLine(t, name)
		// -h: the usage, the description and the flags on stdout.
		for _, args := range [][]string{{name, "-h"}, {"help", name}, {name, b.Path, "-h"}} {
			out, errOut, status := gosymCmd(t, "", args...)
			if status != 0 || errOut != "" || !strings.HasPrefix(out, want) || strings.Count(out, "\n") < 4 {
				t.Errorf("gosym %q: status %d, stdout %q, stderr %q", args, status, out, errOut)
			}
		}
		// Bad usage: status 2 and the usage line on stderr.
		for _, args := range [][]string{{name}, {name, "-nosuchflag", b.Path}} {
			out, errOut, status := gosymCmd(t, "", args...)
			if status != 2 || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("gosym %q: status %d, stdout %q, stderr %q", args, status, out, errOut)
			}
		}
	}
	for _, args := range [][]string{
		{"info", b.Path, "extra"},
		{"funcs", b.Path, "extra"},
		{"lines", b.Path},
		{"lines", b.Path, "main.main", "extra"},
		{"inlines", b.Path},
		{"disasm", b.Path},
	} {
		out, errOut, status := gosymCmd(t, "", args...)
		if status != 2 || out != "" || !strings.Contains(errOut, "arguments\n") {
			t.Errorf("gosym %q: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
}

// TestCommandDoc checks that the command doc (doc.go) and the usage of
// the commands agree: doc.go has a section for each command and no other,
// in the same order; -h prints the section's usage line and text; and the
// flags of the usage line are those the command defines.
func TestCommandDoc(t *testing.T) {
	doc, err := commandDocText()
	if err != nil {
		t.Fatal(err)
	}
	// What go doc shows is what -h quotes from.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			docs = append(docs, name)
		}
	}
	if !slices.Equal(docs, []string{"doc.go"}) {
		t.Errorf("package comments in %q, want doc.go only", docs)
	}

	var names, headings []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	for _, line := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			headings = append(headings, h)
		}
	}
	if !slices.Equal(headings, names) {
		t.Errorf("doc.go has the sections %q, want one per command: %q", headings, names)
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + "."
	if !strings.Contains(strings.Join(strings.Fields(doc), " "), "The commands are "+list) {
		t.Errorf("doc.go does not say \"The commands are %s\"", list)
	}

	flagName := regexp.MustCompile(`(?:^|[\s\[])-(\w+)`)
	for _, name := range names {
		usage, text, err := commandDoc(name)
		if err != nil {
			t.Error(err)
			continue
		}
		if text == "" || !strings.HasSuffix(text, "\n") || strings.Contains(text, "\n# ") {
			t.Errorf("%s: description %q", name, text)
		}
		out, _, _ := gosymCmd(t, "", name, "-h")
		if want := "usage: " + usage + "\n\n" + text; !strings.HasPrefix(out, want) {
			t.Errorf("gosym %s -h:\n%s\nwant it to begin with\n%s", name, out, want)
		}
		var inUsage, defined []string
		for _, m := range flagName.FindAllStringSubmatch(usage, -1) {
			inUsage = append(inUsage, m[1])
		}
		for _, line := range strings.Split(out, "\n") {
			if f, ok := strings.CutPrefix(line, "  -"); ok {
				defined = append(defined, strings.Fields(f)[0])
			}
		}
		slices.Sort(inUsage)
		slices.Sort(defined)
		if !slices.Equal(inUsage, defined) {
			t.Errorf("%s: the usage line %q names the flags %q; the command defines %q", name, usage, inUsage, defined)
		}
	}
}

// TestFlagsAnywhere checks that flags may follow positional arguments and
// that "--" ends the flags.
func TestFlagsAnywhere(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	want := mustRun(t, "", "funcs", "-json", "-match", "^main\\.main$", b.Path)
	for _, args := range [][]string{
		{"funcs", b.Path, "-json", "-match", "^main\\.main$"},
		{"funcs", "-json", b.Path, "-match=^main\\.main$"},
		{"funcs", "-match", "^main\\.main$", "-json", "--", b.Path},
	} {
		if got := mustRun(t, "", args...); got != want {
			t.Errorf("gosym %q: %s, want %s", args, got, want)
		}
	}
	// After "--", "-json" is a file name; "-match --" takes "--" as the
	// regular expression.
	_, errOut, status := gosymCmd(t, "", "funcs", "--", "-json")
	if status != 1 || errOut != "gosym: -json: no such file or directory\n" {
		t.Errorf("funcs -- -json: status %d, stderr %q", status, errOut)
	}
	if out, _, status := gosymCmd(t, "", "funcs", "-match", "--", b.Path); status != 0 || out != "" {
		t.Errorf("funcs -match -- BIN: status %d, output %q", status, out)
	}
}

// cBinary returns a system executable that is not a Go program, or "".
func cBinary() string {
	for _, p := range []string{"/bin/true", "/usr/bin/true", "/bin/ls", "/usr/bin/env"} {
		if _, err := buildinfo.ReadFile(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

func TestErrors(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	data, err := os.ReadFile(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("hello, world\n"), 0o666)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o666)
	truncated := filepath.Join(dir, "truncated")
	os.WriteFile(truncated, data[:len(data)/2], 0o666)
	// A pclntab header claiming more functions than fit.
	corrupt := filepath.Join(dir, "corrupt")
	bad := bytes.Clone(data)
	i := bytes.Index(bad, []byte{0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8})
	if i < 0 {
		t.Fatal("no pclntab header")
	}
	binary.LittleEndian.PutUint64(bad[i+8:], 1<<40)
	os.WriteFile(corrupt, bad, 0o666)
	missing := filepath.Join(dir, "missing")

	cases := []struct {
		path, want string
	}{
		{text, "object: "}, // the object package's message: see TestUnknownFormat
		{empty, "object: "},
		{dir, "is a directory"},
		{missing, "no such file or directory"},
		{corrupt, "corrupt symbol table: pclntab claims 1099511627776 functions"},
		{truncated, "elfobj: "}, // the section headers are gone: a backend error
	}
	// Devices are refused, not read (/dev/zero was read until memory ran
	// out).
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err == nil {
			cases = append(cases, struct{ path, want string }{dev, "not a regular file"})
		}
	}
	if c := cBinary(); c != "" {
		cases = append(cases, struct{ path, want string }{c, "no Go symbol table"})
	} else {
		t.Log("no C executable found")
	}
	for _, c := range cases {
		for _, args := range [][]string{
			{"info", c.path},
			{"funcs", c.path},
			{"addr2line", c.path, "0x401000"},
			{"lines", c.path, "main.main"},
			{"inlines", c.path, "main.main"},
			{"disasm", c.path, "main.main"},
		} {
			out, errOut, status := gosymCmd(t, "", args...)
			prefix := "gosym: " + c.path + ": " + c.want
			if status != 1 || out != "" || !strings.HasPrefix(errOut, prefix) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("gosym %q: status %d, stdout %q, stderr %q; want status 1 and %q", args, status, out, errOut, prefix)
			}
		}
	}

	// A function that does not exist, with suggestions; an address in no
	// function.
	_, errOut, status := gosymCmd(t, "", "lines", b.Path, "main.mian")
	if status != 1 || errOut != "gosym: "+b.Path+": no function main.mian\n" {
		t.Errorf("lines main.mian: status %d, stderr %q", status, errOut)
	}
	_, errOut, status = gosymCmd(t, "", "inlines", b.Path, "main.closure")
	if status != 1 || !strings.HasPrefix(errOut, "gosym: "+b.Path+": no function main.closure (did you mean main.closures") {
		t.Errorf("inlines main.closure: status %d, stderr %q", status, errOut)
	}
	_, errOut, status = gosymCmd(t, "", "disasm", b.Path, "0x10")
	if status != 1 || errOut != "gosym: "+b.Path+": no function at 0x10\n" {
		t.Errorf("disasm 0x10: status %d, stderr %q", status, errOut)
	}
}

// TestBuiltBinary builds the command and checks its exit statuses and
// that it answers as the in-process runs do.
func TestBuiltBinary(t *testing.T) {
	goCmd := goCommand(t)
	exe := filepath.Join(t.TempDir(), "gosym"+exeSuffix())
	if out, err := exec.Command(goCmd, "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	for _, c := range []struct {
		args   []string
		stdin  string
		status int
	}{
		{[]string{"info", b.Path}, "", 0},
		{[]string{"addr2line", b.Path}, "0x401000\n0x480780\nzz\n0\n", 1},
		{[]string{"addr2line", b.Path}, "0x401000\n0x480780\n0\n", 0},
		{[]string{"addr2line", "-h"}, "", 0},
		{[]string{"info", filepath.Join(t.TempDir(), "missing")}, "", 1},
		{[]string{"info"}, "", 2},
		{nil, "", 2},
	} {
		cmd := exec.Command(exe, c.args...)
		cmd.Stdin = strings.NewReader(c.stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		wantOut, wantErr, wantStatus := gosymCmd(t, c.stdin, c.args...)
		if status != c.status || wantStatus != c.status || out.String() != wantOut || errOut.String() != wantErr {
			t.Errorf("gosym %q: status %d, stdout %q, stderr %q\nin-process: status %d, stdout %q, stderr %q",
				c.args, status, out.String(), errOut.String(), wantStatus, wantOut, wantErr)
		}
	}
}

// TestReadmeQuickStart runs the first command of the README's quick start,
// as a new user would, and checks that it prints what addr2line -inlines
// prints for the address it means to pick, and that the address has three
// frames or more, main.main's the outermost.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	goCommand(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Quick start\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 || !strings.HasPrefix(block, "go run ./cmd/gosym ") {
		t.Fatalf("no quick start command in README.md:\n%s", block)
	}
	cmd := exec.Command("sh", "-c", block)
	cmd.Dir = "../.."
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", block, err, errOut.Bytes())
	}
	// The command's pick: the first range of main.main whose inlined
	// call's site (PARENTPC) starts an inlined range itself.
	gobin := goBinary(t)
	pc, inlined := "", map[string]bool{}
	for _, line := range strings.Split(mustRun(t, "", "lines", gobin, "main.main"), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 5 {
			if inlined[f[4]] {
				pc = f[0]
				break
			}
			inlined[f[0]] = true
		}
	}
	want := mustRun(t, "", "addr2line", "-inlines", gobin, pc)
	lines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	if pc == "" || string(out) != want || len(lines) < 6 || lines[len(lines)-2] != "main.main" {
		t.Errorf("%s\nprints %q, want %q (at %s: three frames or more, main.main's last)", block, out, want, pc)
	}
}

// TestUnknownPositions checks that every command spells unknown positions
// as go tool addr2line does: ":-1" in a function that records no line
// (go:textfipsstart, which has no line table), and "?" at "?:0" in no
// function.
func TestUnknownPositions(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	const name = "go:textfipsstart"
	fn, err := openTable(t, b.Path).LookupFunction(name)
	if err != nil {
		t.Fatal(err)
	}
	entry := hex(fn.Entry())
	const inFunc, noFunc = ":-1", "?:0"

	// The oracle, when there is one: go tool addr2line itself.
	if testing.Short() {
		t.Log("not running go tool addr2line in short mode")
	} else if got := runTool(t, entry+"\n0x10\n", goTool(t, "addr2line"), b.Path); got != name+"\n"+inFunc+"\n?\n"+noFunc+"\n" {
		t.Fatalf("go tool addr2line prints %q; the test expects otherwise", got)
	}

	for _, args := range [][]string{{"addr2line"}, {"addr2line", "-inlines"}} {
		args = append(args, b.Path, entry, "0x10")
		if got, want := mustRun(t, "", args...), name+"\n"+inFunc+"\n?\n"+noFunc+"\n"; got != want {
			t.Errorf("gosym %q: %q, want %q", args, got, want)
		}
	}
	if got, want := mustRun(t, "", "funcs", "-match", "^"+name+"$", b.Path), fmt.Sprintf("%s\t%#x\t%s\t%s\n", entry, fn.End(), name, inFunc); got != want {
		t.Errorf("funcs: %q, want %q", got, want)
	}
	if got, want := mustRun(t, "", "lines", b.Path, name), fmt.Sprintf("%s\t%#x\t%s\t%s\n", entry, fn.End(), name, inFunc); got != want {
		t.Errorf("lines: %q, want %q", got, want)
	}
	rows, _, _ := parseAsm(t, mustRun(t, "", "disasm", b.Path, name))
	if len(rows[name]) == 0 {
		t.Errorf("disasm %s: no instructions", name)
	}
	for _, r := range rows[name] {
		if r.fileLine != inFunc {
			t.Errorf("disasm: %q, want file:line %q", r, inFunc)
		}
	}
}

// TestUnknownFormat checks that the error for a file in no known format
// names the file and passes on the object package's message, which shows
// the magic number read, and that the errors of openBinary wrap the
// sentinel errors.
func TestUnknownFormat(t *testing.T) {
	data := make([]byte, 4096)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "random")
	if err := os.WriteFile(path, data, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := object.NewBytes(data); !errors.Is(err, object.ErrUnknownFormat) {
		t.Fatalf("random bytes %x...: object.NewBytes says %v", data[:4], err)
	}
	for _, args := range [][]string{
		{"info", path},
		{"addr2line", path, "0x401000"},
		{"lidia", path, "-o", filepath.Join(t.TempDir(), "out.lidia")},
	} {
		out, errOut, status := gosymCmd(t, "", args...)
		if status != 1 || out != "" || !strings.HasPrefix(errOut, "gosym: "+path+": object: ") ||
			!strings.Contains(errOut, "magic") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("gosym %q: status %d, stdout %q, stderr %q; want status 1 and an error naming the file and its magic", args, status, out, errOut)
		}
	}

	_, err := openBinary(path)
	if !errors.Is(err, object.ErrUnknownFormat) {
		t.Errorf("openBinary(random bytes): %v, not wrapping object.ErrUnknownFormat", err)
	}
	if c := cBinary(); c != "" {
		_, err := openBinary(c)
		if want := c + ": no Go symbol table (looked for "; !errors.Is(err, gosym.ErrNoTable) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("openBinary(%s): %v; want %q... wrapping gosym.ErrNoTable", c, err, want)
		}
	}
}
