package main

import (
	"bufio"
	"fmt"
	"io"
)

// lineJSON is one line of lines -json.
type lineJSON struct {
	Lo       string `json:"lo"`
	Hi       string `json:"hi"`
	Function string `json:"function"`
	File     string `json:"file"`
	Line     uint32 `json:"line"`
	ParentPC string `json:"parent_pc"`
}

func runLines(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("lines")
	jsonOut := f.Bool("json", false, "write one JSON object per range (its fields are listed above)")
	b, fn, status := f.openFunc(args, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()
	lines, err := fn.Lines(nil)
	if err != nil {
		return errorf(stderr, "%v", fileError(b.path, err))
	}
	calls, err := fn.InlinedCalls(nil)
	if err != nil {
		return errorf(stderr, "%v", fileError(b.path, err))
	}

	w := bufio.NewWriter(stdout)
	enc := newJSONLines(w)
	for _, l := range lines {
		var parentPC uint64 // the call site's PC, for an inlined call's range
		if l.Call >= 0 {
			parentPC = calls[l.Call].ParentPC
		}
		if *jsonOut {
			j := lineJSON{
				Lo:       hex(l.PCLo),
				Hi:       hex(l.PCHi),
				Function: l.Function,
				File:     l.File,
				Line:     l.Line,
			}
			if parentPC != 0 {
				j.ParentPC = hex(parentPC)
			}
			enc.write(j)
			continue
		}
		fmt.Fprintf(w, "%#x\t%#x\t%s\t%s", l.PCLo, l.PCHi, l.Function, fileLine(l.File, l.Line))
		if parentPC != 0 {
			fmt.Fprintf(w, "\t%#x", parentPC)
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}
