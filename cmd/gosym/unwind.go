package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/elfcore"
)

func runUnwind(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("unwind")
	b, pos, status := f.open(args, 2, 2, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()
	cf, err := os.Open(pos[1])
	if err != nil {
		return errorf(stderr, "%v", fileError(pos[1], err))
	}
	defer cf.Close()
	core, err := elfcore.NewFile(cf)
	if err != nil {
		return errorf(stderr, "%v", fileError(pos[1], err))
	}
	if a := b.obj.Arch(); a != core.GOARCH() {
		return errorf(stderr, "%s: core of a %q process, binary for %q", pos[1], core.GOARCH(), a)
	}
	w := bufio.NewWriter(stdout)
	var locs []gosym.Location
	for _, th := range core.Threads {
		fmt.Fprintf(w, "thread %d", th.PID)
		if th.Signal != 0 {
			fmt.Fprintf(w, " signal %d", th.Signal)
		}
		fmt.Fprintln(w)
		for fr, err := range b.tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP, LR: th.LR}, core) {
			if err != nil {
				fmt.Fprintf(w, "\tunwinding stopped: %v\n", err)
				break
			}
			locs, err = fr.Func.ResolveLocations(fr.LookupPC(), locs)
			if err != nil || len(locs) == 0 {
				fmt.Fprintf(w, "\t%#x\t%#x\t%s\t%s\n", fr.PC, fr.SP, fr.Func.Name(), noPos)
				continue
			}
			for i, l := range locs {
				inl := ""
				if i < len(locs)-1 {
					inl = "\tinlined"
				}
				fmt.Fprintf(w, "\t%#x\t%#x\t%s\t%s%s\n", fr.PC, fr.SP, l.Function, fileLine(l.File, l.Line), inl)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}
