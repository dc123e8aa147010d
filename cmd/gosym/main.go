// Command gosym reads the Go symbol tables of executables built by any Go
// release from 1.2 on, for any operating system and architecture, stripped
// or not: it symbolizes addresses, lists functions, lines and inlined calls,
// and disassembles functions with their inline stacks.
//
// Usage:
//
//	gosym <command> [flags] BINARY [args]
//
// Every command takes -h. Flags may come before or after the positional
// arguments; "--" ends the flags. The exit status is 0 on success, 1 on an
// error (a file that cannot be read, a function that does not exist, a bad
// address), and 2 on bad usage. Errors name the file and the cause, such as
// "gosym: /bin/ls: no Go symbol table".
//
// Addresses are hexadecimal, with or without 0x (or 0X), and are link-time
// addresses: for a position-independent executable loaded elsewhere,
// subtract the load bias first. A FUNC argument is a function's symbol name
// as stored in the binary ("main.main", "main.(*T).M",
// "pkg.F[go.shape.int]"), or an address (with 0x) inside the function.
//
// Outputs with -json are JSON Lines (one object per line) except for info,
// which writes a single object. The field names below are stable.
//
// # info
//
//	gosym info [-json] BINARY
//
// Info prints the object format and architecture, the Go release that
// built the binary (from its build info), the pclntab layout (its version,
// magic, pointer size, instruction quantum, byte order, address and size),
// how the pclntab and the moduledata were found, the number of functions
// and source files, the text range, and whether the binary is stripped.
//
// A binary is stripped when it has no symbol table: none of the symbols
// runtime.text, runtime.pclntab, pclntab (Go 1.2) and main.main can be
// looked up. Whether it has DWARF (sections named .debug_info,
// .zdebug_info, __debug_info or __zdebug_info) is reported separately, so
// "go build -ldflags=-s" (stripped, DWARF gone too) and "-ldflags=-w" (no
// DWARF, symbols kept) can be told apart. The number of files is the
// table's own count (Go 1.16 and later); older tables do not record it, and
// info counts the distinct files of every function's line table instead.
//
// JSON fields: file, format, arch, go_version, pclntab_version, magic (as
// "0xfffffff1"), ptr_size, quantum, byte_order ("little" or "big"),
// pclntab_addr, pclntab_size, found_by, moduledata_found_by, functions,
// files, files_counted (true when counted from the line tables),
// text_start, text_end, symbols, dwarf, stripped. Addresses are strings
// ("0x401000").
//
// # funcs
//
//	gosym funcs [-json] [-match REGEXP] BINARY
//
// Funcs lists every function in address order, one per line, as
//
//	ENTRY<TAB>END<TAB>NAME<TAB>FILE:LINE
//
// where END is one past the last PC (the next function's entry), FILE is
// the source file at the entry and LINE the line of the func keyword. Go
// 1.19 and older binaries do not record that line; for them LINE is the line
// of the entry PC, which is usually the same. Tabs separate the fields
// because names and file names may hold spaces. -match keeps the functions
// whose name matches the regular expression (unanchored).
//
// JSON fields: entry, end, name, file, start_line (0 when not recorded),
// entry_line, wrapper (a compiler-generated wrapper that tracebacks hide).
//
// # addr2line
//
//	gosym addr2line [-inlines] [-json] BINARY [ADDR...]
//
// Addr2line symbolizes the addresses given as arguments or, when there are
// none, read from standard input, one per line, answering each line as it
// is read.
//
// With no flags, the output is that of "go tool addr2line" (which pprof
// runs): for each address two lines, the name of the physical function (the
// one that holds the code, not the inlined function) and the file:line of
// the innermost inlined call; "?" and "?:0" for an address in no function;
// ":-1" for a PC of a function that has no line there (alignment
// padding); "!reverse translation not implemented" for a line containing a
// colon. For valid input the output is byte for byte the same. Where the
// inputs differ: surrounding white space is ignored, and a line that is not
// a hexadecimal address (including an empty line) is reported on standard
// error, answered "?" and "?:0" so that output stays in step with input,
// and makes the exit status 1 once the input is exhausted; go tool addr2line
// silently looks such a line up as address 0. The tables are read as the
// runtime reads them, so for old binaries and stripped cgo binaries gosym
// answers correctly where go tool addr2line does not (see the tests for the
// list).
//
// With -inlines, each address gets two lines per frame, innermost first:
// the function (inlined or physical) and the file:line in it (for an outer
// frame, the line of the inlined call).
//
// With -json, each address gets one object, modelled on the output of
// "llvm-symbolizer --output-style=JSON":
//
//	{"Address":"0x4a1b2c","ModuleName":"BINARY","Symbol":[FRAME...]}
//
// with every frame, innermost first (-inlines does not matter), each
//
//	{"FunctionName":"strings.Index","FileName":"/usr/local/go/src/strings/strings.go",
//	 "Line":1234,"StartLine":1200,"StartAddress":"","Wrapper":false}
//
// FileName is "" and Line 0 where unknown, StartLine 0 where the binary does
// not record it, StartAddress the function's entry for the physical frame
// (the last one) and "" for inlined frames. Symbol is empty for an address in
// no function. A bad line gets {"Address":"LINE","Error":{"Message":"..."}}
// (and is reported on standard error too).
//
// # inlines
//
//	gosym inlines [-json] [-tree] BINARY FUNC
//
// Inlines lists every function inlined into FUNC, directly or not, once
// each, in the order of its inline tree, as
//
//	NAME<TAB>FILE:STARTLINE
//
// where FILE is the file of the inlinee's body ("" if it has no
// instruction left) and STARTLINE the line of its func keyword (0 before Go
// 1.20). JSON fields: name, file, start_line.
//
// With -tree it shows what was inlined where instead: the tree of inlined
// calls that own instructions, each line giving the call site (file:line in
// the caller), the callee, and the PC ranges of the instructions that are
// the callee's or are inlined into it at that call site:
//
//	main.main /src/main.go:10
//	  main.go:15 strings.Index [0x4a1b20,0x4a1b40) [0x4a1b60,0x4a1b64)
//	    strings.go:1240 internal/bytealg.IndexByteString [0x4a1b28,0x4a1b30)
//
// JSON fields (-tree -json, one object per call): depth (1 for calls in
// FUNC itself), call_file, call_line, name, ranges (pairs of "0x..."
// strings, [lo,hi)).
//
// # lines
//
//	gosym lines [-json] BINARY FUNC
//
// Lines prints FUNC's PC ranges of constant function, file and line, in
// address order and covering the whole function, as
//
//	LO<TAB>HI<TAB>FUNCTION<TAB>FILE:LINE[<TAB>PARENTPC]
//
// where FUNCTION is the innermost inlined function at those PCs (or FUNC
// itself) and PARENTPC, present for inlined code, is a PC whose location is
// the call site (absent for Go 1.9–1.11, which record the call site
// differently). JSON fields: lo, hi, function, file, line, parent_pc (""
// when absent).
//
// # disasm
//
//	gosym disasm BINARY FUNC
//
// Disasm prints FUNC's instructions in Go assembler syntax, as "go tool
// objdump -s" does (file:line, address, encoding, instruction; call targets
// named from the symbol table), and, wherever the inline stack changes, a
// comment line giving the stack outermost first, each inlined call with its
// call site:
//
//	; inlined: main.go:15 strings.Index < strings.go:1240 internal/bytealg.IndexByteString
//
// It decodes amd64, 386, arm64, arm, ppc64 and ppc64le code; other
// architectures are an error.
//
// # lidia
//
//	gosym lidia [-lines=true] [-files=true] [-inlines=true] BINARY -o OUT
//
// Lidia writes the binary's symbols as a Lidia file (the format Pyroscope's
// symbolizer reads), with inlined calls, files and lines unless turned off.
// On a terminal, it shows its progress on standard error when the work
// takes more than a second.
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

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// A command is one subcommand of gosym.
type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	// Assigned here rather than in the declaration: the commands' run
	// functions refer to commands (through usage) and Go forbids the
	// initialization cycle.
	commands = []command{
		{"info", "describe the binary and its symbol table", runInfo},
		{"funcs", "list functions: entry, end, name, file:line", runFuncs},
		{"addr2line", "print function and file:line for addresses", runAddr2line},
		{"inlines", "list the functions inlined into a function", runInlines},
		{"lines", "print a function's PC ranges with function, file and line", runLines},
		{"disasm", "disassemble a function, annotated with lines and inlining", runDisasm},
		{"lidia", "export the symbols as a Lidia file", runLidia},
	}
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

// fileError returns an error "PATH: CAUSE" for an error about the file
// path, with the cause in words a user can act on.
func fileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	msg := err.Error()
	switch {
	case errors.Is(err, object.ErrUnknownFormat):
		msg = "not an object file"
	case errors.Is(err, gosym.ErrNoTable):
		msg = gosym.ErrNoTable.Error()
	case errors.Is(err, gosym.ErrCorrupted):
		// "corrupt symbol table: detail", without a package prefix.
		if i := strings.Index(msg, gosym.ErrCorrupted.Error()); i > 0 {
			msg = msg[i:]
		}
	}
	return fmt.Errorf("%s: %s", path, msg)
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
		return 0, fmt.Errorf("bad address %q", s)
	}
	pc, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("bad address %q: more than 64 bits", s)
		}
		return 0, fmt.Errorf("bad address %q", s)
	}
	return pc, nil
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

// baseName returns the last element of a file name, "" for "".
func baseName(file string) string {
	if file == "" {
		return ""
	}
	return filepath.Base(file)
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
