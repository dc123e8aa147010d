package main

import (
	"fmt"
	"io"

	"github.com/gosym-dev/gosym/gsym"
)

func runGsym(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("gsym")
	out := f.String("o", "", "write the GSYM file to `OUT` (required; - for standard output)")
	pos, status, ok := f.parse(args, 1, 1, stdout, stderr)
	if !ok {
		return status
	}
	if *out == "" {
		fmt.Fprintf(stderr, "gosym gsym: missing -o OUT\n")
		f.printUsage(stderr, false)
		return exitUsage
	}
	b, err := openBinary(pos[0])
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	defer b.Close()

	p := startProgress(stderr, fmt.Sprintf("gosym gsym: %s: %d functions", b.path, b.tab.NumFunctions()))
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		return gsym.Write(p.counting(w), b.tab)
	})
	p.stop()
	if err != nil {
		return errorf(stderr, "%v", describe(b.path, err))
	}
	return exitOK
}
