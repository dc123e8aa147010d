// Command gosym symbolizes addresses of Go executables of any release,
// operating system and architecture, stripped or not.
//
// Usage:
//
//	gosym addr2line [-inlines] BINARY [ADDR...]
//
// addr2line reads hexadecimal addresses (with or without 0x) from its
// arguments, or from standard input when there are none, and prints for
// each the function name and file:line, as go tool addr2line does. With
// -inlines it prints every frame of the inline stack, innermost first.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
)

const usageText = `usage: gosym <command> [flags] BINARY [args]

commands:
  addr2line  print function and file:line for addresses
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command and returns the exit status: 0 on success, 1 on
// error, 2 on bad usage.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	switch args[0] {
	case "addr2line":
		return addr2line(args[1:], stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return 0
	}
	fmt.Fprintf(stderr, "gosym: unknown command %q\n%s", args[0], usageText)
	return 2
}

func addr2line(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("addr2line", flag.ContinueOnError)
	fs.SetOutput(stderr)
	inlines := fs.Bool("inlines", false, "print every inlined frame, innermost first")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gosym addr2line [-inlines] BINARY [ADDR...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return 2
	}
	bin := fs.Arg(0)
	tab, err := gosym.Open(bin)
	if err != nil {
		fmt.Fprintf(stderr, "gosym: %s: %v\n", bin, err)
		return 1
	}
	defer tab.Close()

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	status := 0
	var locs []gosym.Location
	one := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		pc, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 64)
		if err != nil {
			fmt.Fprintf(stderr, "gosym: bad address %q\n", s)
			status = 1
			return
		}
		locs, err = tab.ResolveLocations(pc, locs)
		switch {
		case err != nil:
			fmt.Fprintf(w, "?\n?:0\n")
		case *inlines:
			for _, l := range locs {
				fmt.Fprintf(w, "%s\n%s:%d\n", l.Function, l.File, l.Line)
			}
		default:
			// As go tool addr2line: the physical function, and the
			// source position of the innermost frame.
			fmt.Fprintf(w, "%s\n%s:%d\n", locs[len(locs)-1].Function, locs[0].File, locs[0].Line)
		}
	}
	if fs.NArg() > 1 {
		for _, a := range fs.Args()[1:] {
			one(a)
		}
		return status
	}
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		one(sc.Text())
		if *inlines {
			w.Flush()
		}
	}
	return status
}
