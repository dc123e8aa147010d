package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	{"gsym", "export the symbols as an LLVM GSYM file", runGsym},
	{"symbfile", "export the symbols as an OpenTelemetry symbfile (ranges or return pads)", runSymbfile},
	{"symbols", "list every function, physical and inlined, by package and module", runSymbols},
	{"pprof", "symbolize a pprof profile from the binaries it was recorded from", runPprof},
	{"unwind", "print the stack of every thread of an ELF core file", runUnwind},
	{"goroutines", "print every goroutine of a Go program's ELF core file, with its stack", runGoroutines},
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

// flags is the flag set of one subcommand, whose usage line and
// description are its section of the command doc (see commandDoc).
type flags struct {
	*flag.FlagSet
}

func newFlags(name string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {} // printed by parse
	return &flags{FlagSet: fs}
}

// printUsage writes the usage line and the flags, and if long the
// description between them.
func (f *flags) printUsage(w io.Writer, long bool) {
	usage, text, err := commandDoc(f.Name())
	if err != nil {
		panic(err) // doc.go lacks the command: TestCommandDoc catches that
	}
	fmt.Fprintf(w, "usage: %s\n", usage)
	if long && text != "" {
		fmt.Fprintf(w, "\n%s", text)
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

// docGo is the source of doc.go, whose package comment, the command doc,
// is the one source of each subcommand's usage: the section headed with
// its name.
//
//go:embed doc.go
var docGo string

// commandDocText is the text of the command doc.
var commandDocText = sync.OnceValues(func() (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", docGo, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if f.Doc == nil {
		return "", errors.New("doc.go: no package comment")
	}
	return f.Doc.Text(), nil
})

// commandDoc returns the usage line of the command name and its
// description, both from the section "# name" of the command doc: the
// usage line is the indented line that opens the section, and the
// description (ending in a newline) the rest of the section.
func commandDoc(name string) (usage, text string, err error) {
	doc, err := commandDocText()
	if err != nil {
		return "", "", err
	}
	_, section, ok := strings.Cut(doc, "\n# "+name+"\n")
	if !ok {
		return "", "", fmt.Errorf("doc.go: no section # %s", name)
	}
	if i := strings.Index(section, "\n# "); i >= 0 {
		section = section[:i+1]
	}
	section = strings.TrimLeft(section, "\n")
	first, rest, _ := strings.Cut(section, "\n")
	if !strings.HasPrefix(first, "\tgosym "+name) {
		return "", "", fmt.Errorf("doc.go: section # %s does not open with the usage line \"\tgosym %s ...\": %q", name, name, first)
	}
	text = strings.TrimLeft(rest, "\n")
	if text != "" {
		text = strings.TrimRight(text, "\n") + "\n"
	}
	return strings.TrimSpace(first), text, nil
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
// with 0x inside the function. A name may leave out type arguments. When
// several functions have the name, the error lists them with their
// addresses, to pick one by address; for a name no physical function has,
// it says where the function was inlined, or suggests similar names.
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
	var found []gosym.Function
	for f, err := range b.tab.LookupFunctions(arg) {
		if err != nil {
			return f, fileError(b.path, err)
		}
		found = append(found, f)
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		var list strings.Builder
		for _, f := range found {
			fmt.Fprintf(&list, "\n\t%#x\t%s", f.Entry(), f.Name())
		}
		return gosym.Function{}, fmt.Errorf("%s: %d functions are called %s; give the address of one:%s", b.path, len(found), arg, list.String())
	}
	if sites, err := b.inlinedSites(arg); err != nil {
		return gosym.Function{}, err
	} else if len(sites) > 0 {
		return gosym.Function{}, fmt.Errorf("%s: %s exists only inlined, into:%s", b.path, arg, strings.Join(sites, ""))
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
	return gosym.Function{}, errors.New(msg)
}

// maxInlinedSites is how many places inlinedSites lists.
const maxInlinedSites = 10

// inlinedSites lists, one "\n\tFUNC (FILE:LINE)" each, the functions
// into which a function called name (type arguments optional) was
// inlined, with the call site; at most maxInlinedSites, then a count of
// the rest.
func (b *exe) inlinedSites(name string) ([]string, error) {
	var sites []string
	n := 0
	var calls []gosym.InlinedCall
	for fn, err := range b.tab.Functions() {
		if err != nil {
			return nil, fileError(b.path, err)
		}
		if calls, err = fn.InlinedCalls(calls); err != nil {
			return nil, fileError(b.path, err)
		}
		for _, c := range calls {
			if c.Name != name && gosym.WithoutTypeArgs(c.Name) != name {
				continue
			}
			if n++; n <= maxInlinedSites {
				sites = append(sites, fmt.Sprintf("\n\t%s (%s)", fn.Name(), fileLine(c.CallFile, c.CallLine)))
			}
		}
	}
	if n > maxInlinedSites {
		sites = append(sites, fmt.Sprintf("\n\t... and %d more", n-maxInlinedSites))
	}
	return sites, nil
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
