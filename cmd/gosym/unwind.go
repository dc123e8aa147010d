package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

func runUnwind(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("unwind")
	frames := f.Int("frames", 100, "print at most `N` frames of each thread")
	b, pos, status := f.open(args, 2, 2, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()
	if *frames < 1 {
		return errorf(stderr, "-frames %d: must be at least 1", *frames)
	}
	// A regular file only, as the binary: a FIFO would block, /dev/zero
	// never end.
	cf, err := mmapfile.Load(pos[1])
	if err != nil {
		return errorf(stderr, "%v", fileError(pos[1], err))
	}
	defer runtime.KeepAlive(cf)
	w := bufio.NewWriter(stdout)
	if err := b.unwindCore(w, pos[1], cf.Bytes(), *frames); err != nil {
		return errorf(stderr, "%v", err)
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// unwindCore prints the stacks of the threads of the core file data, named
// name, at most maxFrames frames each (inlined frames included), to w.
func (b *exe) unwindCore(w io.Writer, name string, data []byte, maxFrames int) error {
	core, err := elfcore.NewFile(bytes.NewReader(data))
	if err != nil {
		return fileError(name, err)
	}
	if a := b.obj.Arch(); a != core.GOARCH() {
		return fmt.Errorf("%s: core of a %q process, binary for %q", name, core.GOARCH(), a)
	}
	var locs []gosym.Location
	for _, th := range core.Threads {
		fmt.Fprintf(w, "thread %d", th.PID)
		if th.Signal != 0 {
			fmt.Fprintf(w, " signal %d", th.Signal)
		}
		fmt.Fprintln(w)
		printed := 0 // frames printed, inlined ones included
		for fr, err := range b.tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP, LR: th.LR}, core) {
			if err != nil {
				fmt.Fprintf(w, "\tunwinding stopped: %v\n", err)
				break
			}
			locs, err = fr.Func.ResolveLocations(fr.LookupPC(), locs)
			printed += max(len(locs), 1)
			if printed > maxFrames {
				// A damaged or hostile stack can loop, or be as long as
				// the core: stop where the runtime's tracebacks would.
				fmt.Fprintf(w, "\tunwinding stopped: more than %d frames, at pc %#x sp %#x\n", maxFrames, fr.PC, fr.SP)
				break
			}
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
	return nil
}
