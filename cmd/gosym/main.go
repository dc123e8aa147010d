// Command gosym reads the Go symbol tables of executables built by any Go
// release from 1.2 on, for any operating system (ELF, Mach-O, PE and Plan 9
// files) and architecture, stripped or not. It symbolizes addresses, lists
// functions, their lines and inlined calls, disassembles functions with
// their inline stacks, and exports the tables for profilers.
//
// Usage:
//
//	gosym <command> [flags] BINARY [args]
//
// The commands are info, funcs, addr2line, inlines, lines, disasm and
// lidia. Each takes -h ("gosym help CMD" is the same); flags may come before
// or after the other arguments, and "--" ends them. The exit status is 0
// on success, 1 on an error (a file that cannot be read, a function that
// does not exist, a bad address) and 2 on bad usage. Error messages name
// the file and the cause, such as "gosym: /bin/ls: no Go symbol table",
// "gosym: notes.txt: object: unknown format (magic 68 65 6c 6c; reads ELF,
// Mach-O, PE and Plan 9)" or "gosym: prog: corrupt symbol table: pclntab
// claims 1099511627776 functions, more than fit".
//
// Addresses are hexadecimal, with or without 0x (or 0X), and are link-time
// addresses: for a position-independent executable loaded elsewhere,
// subtract the load bias first; for a return address taken from a stack,
// look up the address before it. A FUNC argument is a function's symbol
// name as stored in the binary ("main.main", "main.(*T).M",
// "pkg.F[go.shape.int]"), or an address with 0x inside the function.
//
// Text output spells unknown positions as go tool addr2line does, in every
// command: a PC in no function is in function "?" at "?:0", and a PC whose
// function records neither file nor line there (alignment padding, or a
// function without a line table) is at ":-1"; a file alone unknown is
// empty (":12").
//
// With -json, output is JSON Lines (one object per line), except for info,
// which writes one object; unknown files are "" there, addresses strings
// such as "0x401000", and the field names given below are stable.
//
// # info
//
//	gosym info [-json] BINARY
//
// Info prints the object format and architecture, the Go release that built
// the binary (from its build info, or before Go 1.13 from
// runtime.buildVersion), the pclntab layout (the first release that wrote
// it, magic, pointer size, instruction quantum, byte order, address and
// size), how the pclntab and the moduledata were found, the number of
// functions and source files, the text range and whether the binary is
// stripped.
//
// A binary is stripped when it has no symbol table: none of runtime.text,
// runtime.pclntab, pclntab (Go 1.2) and main.main can be looked up in it.
// Of an ELF file, only the static symbol table (.symtab) counts, not the
// dynamic one (.dynsym) that stripping keeps, which holds every Go symbol
// in a program that imports package plugin.
// Whether it has DWARF (a section .debug_info, .zdebug_info, __debug_info
// or __zdebug_info) is reported separately, so "-ldflags=-s" (no symbols, and
// no DWARF either) and "-ldflags=-w" (no DWARF) builds can be told apart.
// The number of files is the table's own count from Go 1.16 on; older tables
// do not keep one, and info counts the distinct files of every function's
// line table instead (and says so).
//
// JSON fields: file, format ("elf", "macho", "pe", "plan9"), arch (GOARCH,
// "" if unknown), go_version ("" if unknown), pclntab_version ("1.2",
// "1.16", "1.18", "1.20"), magic ("0xfffffff1"), ptr_size, quantum,
// byte_order ("little", "big"), pclntab_addr, pclntab_size, found_by,
// moduledata_found_by ("" before Go 1.18), functions, files,
// files_counted, text_start, text_end (one past the last function),
// symbols, dwarf, stripped.
//
// # funcs
//
//	gosym funcs [-json] [-match REGEXP] BINARY
//
// Funcs lists every function in address order, one per line:
//
//	ENTRY<TAB>END<TAB>NAME<TAB>FILE:LINE
//
// END is one past the last PC: the next function's entry, the pclntab
// recording no sizes, so alignment padding belongs to the function before
// it. FILE is the source file at the entry and LINE the line of the func
// keyword; Go 1.19 and older binaries do not record that line, and for them
// LINE is the line of the entry PC. Tabs separate the fields because names
// and file names may hold spaces. -match keeps the functions whose name
// matches the regular expression (unanchored).
//
// JSON fields: entry, end, name, file, start_line (0 when not recorded),
// entry_line, wrapper (a compiler-generated wrapper, which tracebacks hide).
//
// # addr2line
//
//	gosym addr2line [-inlines] [-json] BINARY [ADDR...]
//
// Addr2line symbolizes the addresses given as arguments or, when there are
// none, read from standard input, one per line. Its output is flushed
// whenever it has answered all the input read so far, so it can serve a
// program that writes an address and waits for the answer.
//
// Without flags, the output is that of "go tool addr2line" (which pprof
// runs), byte for byte for the same valid input: for each address two
// lines, the name of the physical function (the one that holds the code,
// not the inlined one) and the file:line of the innermost inlined call;
// "?" and "?:0" for an address in no function; ":-1" for a PC that has no
// line, such as alignment padding; and "!reverse translation not
// implemented" for a line containing a colon.
//
// Bad lines are where gosym departs from go tool addr2line, which silently
// looks up any line it cannot parse as address 0. gosym ignores white space
// around an address; a line that is still not a hexadecimal address of at
// most 64 bits (an empty line too) is reported on standard error, answered
// "?" and "?:0" so that the output stays in step with the input, and makes
// the exit status 1 once all the input is answered. And gosym reads the
// tables as the runtime does, so where debug/gosym is wrong (functions
// without a line table, the last file of Go 1.2–1.7 tables, the text start
// of stripped cgo binaries; see addr2line_test.go) the answers differ.
//
// With -inlines, each address gets two lines per frame, innermost first: the
// function (inlined or physical) and the file:line in it, which for an
// outer frame is the line of the inlined call.
//
// With -json, each address gets one object, modelled on the output of
// "llvm-symbolizer --output-style=JSON", with every frame innermost first
// whether or not -inlines is given:
//
//	{"Address":"0x484d1a","ModuleName":"BINARY","Symbol":[
//	  {"FunctionName":"gosymtest/leaf.Fold","FileName":"/src/leaf/fold.go","Line":7,
//	   "StartLine":5,"StartAddress":"","Wrapper":false},
//	  ...,
//	  {"FunctionName":"main.work","FileName":"/src/work.go","Line":12,
//	   "StartLine":9,"StartAddress":"0x484aa0","Wrapper":false}]}
//
// (on one line). StartLine is the line of the frame's func keyword (0 when
// the binary does not record it, before Go 1.20); StartAddress is the
// function's entry in the physical frame and "" in inlined ones; Wrapper
// marks compiler-generated wrappers. Symbol is [] for an address in no
// function. A bad line gets
//
//	{"Address":"LINE","ModuleName":"BINARY","Error":{"Message":"bad address \"LINE\""}}
//
// (LINE quoted in Message as far as its first 40 bytes) and a line with a
// colon the Message "reverse translation not implemented".
//
// # inlines
//
//	gosym inlines [-json] [-tree] BINARY FUNC
//
// Inlines lists every function inlined into FUNC, directly or not, once
// each, in the order of FUNC's inline tree:
//
//	NAME<TAB>FILE:STARTLINE
//
// FILE is the file of the inlinee's body (empty if none of its instructions
// is left) and STARTLINE the line of its func keyword (0 before Go 1.20). JSON
// fields: name, file, start_line.
//
// With -tree it shows what was inlined where: the tree of the inlined calls
// that have instructions, one per line, indented by depth, each with its
// call site (file:line in the caller), the callee and the PC ranges
// [lo,hi) of its instructions and those of the calls inlined into it. Calls
// of the same function from the same line of a caller are merged.
//
//	main.work /src/work.go:9
//	  work.go:11 main.chain [0x484aba,0x484ac2) [0x484b14,0x484b1c) ...
//	    work.go:31 gosymtest/mid.Outer [0x484aba,0x484ac2) ...
//	  work.go:14 gosymtest/shape.All [0x484b02,0x484b14) ...
//
// JSON fields, one object per call in the same order: depth (1 for calls
// made by FUNC itself), call_file, call_line, name, ranges (a list of
// ["0xlo","0xhi"] pairs).
//
// # lines
//
//	gosym lines [-json] BINARY FUNC
//
// Lines prints the PC ranges of FUNC over which function, file and line are
// constant, in address order, covering the function from its entry to its
// end:
//
//	LO<TAB>HI<TAB>FUNCTION<TAB>FILE:LINE[<TAB>PARENTPC]
//
// HI is one past the range; FUNCTION is the innermost inlined function at
// those PCs, or FUNC itself; PARENTPC, given for inlined code, is a PC
// whose location (see addr2line) is the call site. Go 1.9–1.11 tables record
// call sites differently and give no PARENTPC. JSON fields: lo, hi,
// function, file, line, parent_pc ("" when absent).
//
// # disasm
//
//	gosym disasm BINARY FUNC
//
// Disasm prints FUNC's instructions as "go tool objdump -s" does, in the same
// layout (file:line, address, encoding, instruction in Go assembler syntax),
// with calls and jumps to functions named from the symbol table, and adds
// what objdump cannot show: wherever the inline stack changes, a comment
// line with the stack, outermost first, each frame followed by the
// position of the call to the next:
//
//	; main.work work.go:11 > main.chain work.go:31 > gosymtest/mid.Outer
//	outer.go:6   0x484aba   48898424e8000000   MOVQ AX, 0xe8(SP)
//	; main.work
//	work.go:12   0x484ac2   488d4807           LEAQ 0x7(AX), CX
//
// The alignment padding at the end is not decoded but summarized as
// "; padding 0xLO-0xHI (N bytes)". Unlike objdump, which reads the object's
// symbol table, disasm names no data symbols: an operand objdump shows as
// "main.seed(SB)" is "0xb6ca7(IP)" here. It decodes amd64, 386, arm64, arm,
// ppc64 and ppc64le code; other architectures are an error.
//
// # lidia
//
//	gosym lidia [-lines=true] [-files=true] [-inlines=true] BINARY -o OUT
//
// Lidia writes the symbols of BINARY as a Lidia file, the format of
// Pyroscope's symbolizer: the PC ranges of every function and of its inlined
// calls with their call sites, line tables and source files, unless turned
// off by -lines=false, -files=false or -inlines=false. OUT is written under a
// temporary name and renamed when complete; "-o -" writes to standard
// output. When standard error is a terminal and the work takes more than a
// second, a progress line there shows the time spent and the bytes written.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// A command is one subcommand of gosym.
type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands are the subcommands, in the order of the usage message.
var commands = []command{
	{"info", "describe the binary and its symbol table", runInfo},
	{"funcs", "list functions: entry, end, name, file:line", runFuncs},
	{"addr2line", "print function and file:line for addresses", runAddr2line},
	{"inlines", "list the functions inlined into a function", runInlines},
	{"lines", "print a function's PC ranges with function, file and line", runLines},
	{"disasm", "disassemble a function, annotated with lines and inlining", runDisasm},
	{"lidia", "export the symbols as a Lidia file", runLidia},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run executes the command line args (without the program name) and returns
// the exit status: 0 on success, 1 on error, 2 on bad usage.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			// "gosym help CMD" is "gosym CMD -h".
			return run([]string{args[1], "-h"}, stdin, stdout, stderr)
		}
		printUsage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "gosym: unknown command %q\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: gosym <command> [flags] BINARY [args]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun \"gosym <command> -h\" for a command's usage.\n")
}

// flags is the flag set of one subcommand, with its usage line and a
// description printed by -h.
type flags struct {
	*flag.FlagSet
	usage string // "gosym funcs [-json] [-match REGEXP] BINARY"
	doc   string // a paragraph, ending in a newline
}

func newFlags(name, usage, doc string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {} // printed by parse
	return &flags{FlagSet: fs, usage: usage, doc: doc}
}

// printUsage writes the usage line, the description and the flags.
func (f *flags) printUsage(w io.Writer, long bool) {
	fmt.Fprintf(w, "usage: %s\n", f.usage)
	if long && f.doc != "" {
		fmt.Fprintf(w, "\n%s", f.doc)
	}
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		if long {
			fmt.Fprintln(w)
		}
		f.SetOutput(w)
		f.PrintDefaults()
	}
}

// parse parses args, in which flags and positional arguments may be mixed
// ("gosym funcs BIN -json"), and checks that there are between min and max
// positional arguments (max < 0: no limit). On -h it prints the usage to
// stdout; on bad usage it prints the problem and the usage to stderr. ok
// is false when the command should return status.
func (f *flags) parse(args []string, min, max int, stdout, stderr io.Writer) (pos []string, status int, ok bool) {
	f.SetOutput(stderr)
	for {
		err := f.Parse(args)
		if err == flag.ErrHelp {
			f.printUsage(stdout, true)
			return nil, exitOK, false
		}
		if err != nil {
			// The flag package has printed the error.
			f.printUsage(stderr, false)
			return nil, exitUsage, false
		}
		rest := f.Args()
		if len(rest) == 0 {
			break
		}
		if f.endedByDashDash(args, rest) {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		switch {
		case len(pos) < min:
			fmt.Fprintf(stderr, "gosym %s: missing arguments\n", f.Name())
		default:
			fmt.Fprintf(stderr, "gosym %s: too many arguments\n", f.Name())
		}
		f.printUsage(stderr, false)
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

// endedByDashDash reports whether Parse(args) stopped at a "--", leaving
// rest, rather than at a positional argument: the argument before rest is
// "--" and is not the value of a flag that takes one ("-match --").
func (f *flags) endedByDashDash(args, rest []string) bool {
	i := len(args) - len(rest) - 1
	if i < 0 || args[i] != "--" {
		return false
	}
	if i == 0 {
		return true
	}
	prev := strings.TrimLeft(args[i-1], "-")
	if !strings.HasPrefix(args[i-1], "-") || strings.Contains(prev, "=") {
		return true
	}
	fl := f.Lookup(prev)
	if fl == nil {
		return true
	}
	if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return true
	}
	return false // "--" was the flag's value
}

// An exe is an opened executable with its Go symbol table.
type exe struct {
	path string
	obj  *object.File
	tab  *gosym.Table
}

// openBinary opens the executable at path and reads its Go symbol table.
// Its errors name the file and say what is wrong with it.
func openBinary(path string) (*exe, error) {
	obj, err := object.Open(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	tab, err := gosym.NewTable(obj)
	if err != nil {
		obj.Close()
		return nil, fileError(path, err)
	}
	return &exe{path: path, obj: obj, tab: tab}, nil
}

func (b *exe) Close() {
	b.tab.Close()
	b.obj.Close()
}

// fileError returns err about the file path as an error "PATH: ERR" that
// wraps err. An *fs.PathError about path itself is unwrapped first, so that
// the path is named once: "prog: no such file or directory".
func fileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// errorf prints an error message prefixed by "gosym: " and returns the
// error exit status.
func errorf(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "gosym: "+format+"\n", args...)
	return exitError
}

// parseAddr parses a hexadecimal address with or without 0x or 0X,
// ignoring surrounding white space.
func parseAddr(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	// ParseUint would accept underscores with base 0 only; with base 16
	// it takes plain hex digits, but also a sign: reject that.
	if t == "" || t[0] == '+' || t[0] == '-' {
		return 0, fmt.Errorf("bad address %s", quoteShort(s))
	}
	pc, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("bad address %s: more than 64 bits", quoteShort(s))
		}
		return 0, fmt.Errorf("bad address %s", quoteShort(s))
	}
	return pc, nil
}

// maxQuoted is the most bytes of an input that quoteShort quotes.
const maxQuoted = 40

// quoteShort quotes s as %q does for an error message. When s is longer
// than maxQuoted bytes, it quotes only the first maxQuoted (fewer if that
// would split a UTF-8 sequence) and adds "..." and the length of s, so
// that a bad input line of any size makes a short message:
// "0123456789"... (1048576 bytes).
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:n], len(s))
}

// lookupFunc finds the function named by arg: a symbol name, or an address
// with 0x inside the function.
func (b *exe) lookupFunc(arg string) (gosym.Function, error) {
	if strings.HasPrefix(arg, "0x") || strings.HasPrefix(arg, "0X") {
		pc, err := parseAddr(arg)
		if err != nil {
			return gosym.Function{}, err
		}
		f, err := b.tab.ResolveFunction(pc)
		if errors.Is(err, gosym.ErrPCNotFound) {
			return f, fmt.Errorf("%s: no function at %#x", b.path, pc)
		}
		if err != nil {
			return f, fileError(b.path, err)
		}
		return f, nil
	}
	f, err := b.tab.LookupFunction(arg)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, gosym.ErrFunctionNotFound) {
		return f, fileError(b.path, err)
	}
	// Suggest a few names that contain arg, or arg's last element.
	key := arg
	if i := strings.LastIndexAny(key, "./"); i >= 0 && i+1 < len(key) {
		key = key[i+1:]
	}
	var near []string
	for fn, err := range b.tab.Functions() {
		if err != nil {
			break
		}
		if strings.Contains(fn.Name(), key) {
			near = append(near, fn.Name())
			if len(near) == 5 {
				break
			}
		}
	}
	msg := fmt.Sprintf("%s: no function %s", b.path, arg)
	if len(near) > 0 {
		msg += " (did you mean " + strings.Join(near, ", ") + "?)"
	}
	return f, errors.New(msg)
}

// open parses args as parse does and opens the binary named by the first
// positional argument, for the commands invoked as "gosym CMD BINARY ...".
// When it returns a nil exe, it has printed the usage or the error, and
// the command should return status; otherwise the caller closes b.
// Commands that check their flags between the two steps call parse and
// openBinary themselves.
func (f *flags) open(args []string, min, max int, stdout, stderr io.Writer) (b *exe, pos []string, status int) {
	pos, status, ok := f.parse(args, min, max, stdout, stderr)
	if !ok {
		return nil, nil, status
	}
	b, err := openBinary(pos[0])
	if err != nil {
		return nil, nil, errorf(stderr, "%v", err)
	}
	return b, pos, exitOK
}

// openFunc is open for the commands invoked as "gosym CMD BINARY FUNC": it
// also looks up the function FUNC (see lookupFunc).
func (f *flags) openFunc(args []string, stdout, stderr io.Writer) (b *exe, fn gosym.Function, status int) {
	b, pos, status := f.open(args, 2, 2, stdout, stderr)
	if b == nil {
		return nil, fn, status
	}
	fn, err := b.lookupFunc(pos[1])
	if err != nil {
		b.Close()
		return nil, fn, errorf(stderr, "%v", err)
	}
	return b, fn, exitOK
}

// baseName returns the last element of a file name, "" for "".
func baseName(file string) string {
	if file == "" {
		return ""
	}
	return filepath.Base(file)
}

// Unknown positions are printed in text output as go tool addr2line prints
// them, by every command: a PC in no function has the function noFunc and
// the position noPos, and a PC in a function that knows neither file nor
// line there (alignment padding, a function without a line table) has the
// position noFileLine; fileLine and appendFileLine spell that one.
const (
	noFunc     = "?"
	noPos      = "?:0"
	noFileLine = ":-1"
)

// fileLine formats the source position file:line for text output, as
// go tool addr2line does: noFileLine when both are unknown.
func fileLine(file string, line uint32) string {
	return string(appendFileLine(nil, file, line))
}

// appendFileLine appends fileLine(file, line) to dst.
func appendFileLine(dst []byte, file string, line uint32) []byte {
	if file == "" && line == 0 {
		return append(dst, noFileLine...)
	}
	dst = append(dst, file...)
	dst = append(dst, ':')
	return strconv.AppendUint(dst, uint64(line), 10)
}

// hex formats an address for JSON.
func hex(pc uint64) string { return fmt.Sprintf("%#x", pc) }

// jsonLines writes values as JSON Lines.
type jsonLines struct{ enc *json.Encoder }

func newJSONLines(w io.Writer) jsonLines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return jsonLines{enc}
}

func (j jsonLines) write(v any) error { return j.enc.Encode(v) }
