package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
)

// An asmRow is one instruction line of disasm or go tool objdump.
type asmRow struct {
	fileLine, addr, enc, text string
}

// parseAsm parses the output of go tool objdump or gosym disasm into the
// instruction rows of each function. Comment lines ("  ; ...") are counted
// in comments, except padding lines: padding has the address where each
// function's padding starts.
func parseAsm(t *testing.T, out string) (funcs map[string][]asmRow, padding map[string]string, comments int) {
	t.Helper()
	funcs = map[string][]asmRow{}
	padding = map[string]string{}
	var cur string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "TEXT "):
			cur, _, _ = strings.Cut(strings.TrimPrefix(line, "TEXT "), "(SB)")
		case strings.HasPrefix(line, "  ; padding "):
			padding[cur], _, _ = strings.Cut(strings.TrimPrefix(line, "  ; padding "), "-")
		case strings.HasPrefix(line, "  ; "):
			comments++
		default:
			var f []string
			for _, s := range strings.Split(line, "\t") {
				if s != "" {
					f = append(f, s)
				}
			}
			if len(f) != 4 {
				t.Fatalf("bad line %q", line)
			}
			funcs[cur] = append(funcs[cur], asmRow{strings.TrimSpace(f[0]), f[1], f[2], f[3]})
		}
	}
	return funcs, padding, comments
}

// isBranch reports whether the instruction (Go syntax) is a call or jump,
// whose target both tools name from the function table.
var isBranch = regexp.MustCompile(`^(CALL|JMP|BL|B|CALL\.)\b`).MatchString

// compareObjdump disassembles the functions matching re with go tool
// objdump and with gosym disasm and compares every instruction: address,
// encoding, file:line and text. objdump names data symbols from the
// object's symbol table, which gosym does not read; such operands
// ("main.seed(SB)" where gosym says "0xb6ca7(IP)") are the only allowed
// difference, and never in a branch.
func compareObjdump(t *testing.T, path, re string) {
	t.Helper()
	want, _, _ := parseAsm(t, runTool(t, "", goTool(t, "objdump"), "-s", re, path))
	if len(want) == 0 {
		t.Fatalf("objdump -s %s: no function", re)
	}
	insts, dataSyms, abi0, comments := 0, 0, 0, 0
	for name, wrows := range want {
		got, padding, n := parseAsm(t, mustRun(t, "", "disasm", path, name))
		comments += n
		grows := got[name]
		// Where symbols have no size (PE, Plan 9), objdump decodes
		// the padding up to the next symbol; disasm summarizes it.
		if len(wrows) > len(grows) && padding[name] != "" {
			for _, w := range wrows[len(grows):] {
				if w.fileLine != ":-1" || mustAddr(t, w.addr) < mustAddr(t, padding[name]) {
					t.Errorf("%s: objdump shows %q after disasm's last instruction, not padding from %s", name, w, padding[name])
				}
			}
			wrows = wrows[:len(grows)]
		}
		if len(grows) != len(wrows) {
			t.Errorf("%s: %d instructions, objdump has %d", name, len(grows), len(wrows))
			continue
		}
		// The padding follows objdump's last instruction.
		if n := len(wrows); n > 0 {
			last := wrows[n-1]
			end := mustAddr(t, last.addr) + uint64(len(strings.ReplaceAll(last.enc, " ", ""))/2)
			if p, ok := padding[name]; ok && p != hex(end) {
				t.Errorf("%s: padding from %s, objdump's last instruction ends at %#x", name, p, end)
			}
		}
		for i, w := range wrows {
			g := grows[i]
			insts++
			if g == w {
				continue
			}
			if g.addr == w.addr && g.enc == w.enc && g.fileLine == w.fileLine {
				if strings.Contains(w.text, "(SB)") && !isBranch(w.text) {
					dataSyms++
					continue
				}
				// objdump names assembly functions by their
				// symbols, with the ABI: runtime.morestack_noctxt.abi0.
				if strings.ReplaceAll(w.text, ".abi0(SB)", "(SB)") == g.text {
					abi0++
					continue
				}
			}
			t.Errorf("%s: gosym disasm %q\n\tgo tool objdump %q", name, g, w)
		}
	}
	t.Logf("%s: %d functions, %d instructions as objdump shows them (%d naming data symbols objdump finds in the symbol table, %d calls of assembly functions objdump names with .abi0); %d inline-stack comments",
		path, len(want), insts, dataSyms, abi0, comments)
}

func TestDisasmObjdumpCorpus(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	compareObjdump(t, b.Path, `^main\.`)
}

// TestDisasmObjdumpArch compares with objdump on cross builds for every
// architecture disasm decodes, and every object format.
func TestDisasmObjdumpArch(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if testing.Short() {
		t.Skip("cross builds")
	}
	for _, target := range []objtest.Target{
		objtest.LinuxAMD64,
		objtest.Linux386,
		objtest.LinuxARM64,
		objtest.LinuxPPC64,
		{GOOS: "linux", GOARCH: "ppc64le", Name: "linux_ppc64le"},
		{GOOS: "linux", GOARCH: "arm", Name: "linux_arm"},
		// The other object formats.
		objtest.DarwinARM64,
		objtest.WindowsAMD64,
		objtest.Plan9386,
	} {
		t.Run(target.Name, func(t *testing.T) {
			compareObjdump(t, objtest.Path(t, target), `^(main\..*|runtime\.mallocgc|runtime\.memmove|runtime\.schedule)$`)
		})
	}
}

func TestDisasmInlineComments(t *testing.T) {
	path := selfPath(t)
	out := mustRun(t, "", "disasm", path, pkg+"callInlined")
	file := sourceFile(t, path, pkg+"callInlined")
	want := "  ; " + pkg + "callInlined addr2line_test.go:" + lineOf(t, file, "return inlinedMiddle(pcs)") +
		" > " + pkg + "inlinedMiddle addr2line_test.go:" + lineOf(t, file, "return inlinedLeaf(pcs)") +
		" > " + pkg + "inlinedLeaf\n"
	if !strings.Contains(out, want) || !strings.Contains(out, "  ; "+pkg+"callInlined\n") {
		t.Errorf("disasm callInlined does not show\n%s\n%s", want, out)
	}
}

func TestDisasmUnsupported(t *testing.T) {
	if testing.Short() {
		t.Skip("cross build")
	}
	path := objtest.Path(t, objtest.LinuxS390X)
	out, errOut, status := gosymCmd(t, "", "disasm", path, "main.main")
	if status != 1 || out != "" || errOut != "gosym: "+path+": cannot disassemble s390x code (only amd64, 386, arm64, arm, ppc64 and ppc64le)\n" {
		t.Errorf("disasm of s390x: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}
