package main

import (
	"fmt"
	"io"

	"github.com/gosym-dev/gosym/symbfile"
)

// runSymbfile runs "gosym symbfile" (doc.go, "symbfile").
func runSymbfile(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("symbfile")
	out := f.String("o", "-", "write the symbfile to `OUT` (- for standard output)")
	pads := f.Bool("returnpads", false, "write the return pads instead of the ranges")
	pos, status, ok := f.parse(args, 1, 1, stdout, stderr)
	if !ok {
		return status
	}
	b, err := openBinary(pos[0])
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	defer b.Close()
	p := startProgress(stderr, fmt.Sprintf("gosym symbfile: %s: %d functions", b.path, b.tab.NumFunctions()))
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		return symbfile.Write(p.counting(w), b.tab, symbfile.WithReturnPads(*pads))
	})
	p.stop()
	if err != nil {
		return errorf(stderr, "%v", describe(b.path, err))
	}
	return exitOK
}
