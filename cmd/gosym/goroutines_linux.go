package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/liveproc"
)

// goroutinesLive prints the goroutines of the live process pid: it opens
// the process's executable (/proc/PID/exe), stops every thread
// (liveproc.Attach), reads the goroutines and their stacks into memory,
// lets the process go on, and then prints them; standard error says how
// long the process was stopped.
func goroutinesLive(pid, maxFrames int, asJSON bool, stdout, stderr io.Writer) int {
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	b, err := openBinary(exe)
	if err != nil {
		return errorf(stderr, "process %d: %v", pid, err)
	}
	defer b.Close()
	proc, err := liveproc.Attach(pid)
	if err != nil {
		return errorf(stderr, "process %d: %v", pid, err)
	}
	// Everything is read while the process is stopped, and printed once
	// it goes on: the stop lasts as long as the reading, not the writing.
	var out, msgs bytes.Buffer
	damaged, err := func() (int, error) {
		rel, err := b.relocation(exe, proc.Image)
		if err != nil {
			return 0, err
		}
		p, err := goroutines.NewRelocated(b.tab, proc, proc.Threads, rel)
		if err != nil {
			return 0, fmt.Errorf("process %d: %w", pid, err)
		}
		w := bufio.NewWriter(&out)
		damaged, err := printGoroutines(w, &msgs, b.tab, p, rel, maxFrames, asJSON)
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return damaged, err
	}()
	stopped, derr := proc.Detach()
	if _, werr := stdout.Write(out.Bytes()); err == nil {
		err = werr
	}
	stderr.Write(msgs.Bytes())
	if derr != nil {
		return errorf(stderr, "process %d: detach: %v", pid, derr)
	}
	fmt.Fprintf(stderr, "gosym: process %d was stopped for %v (%d threads)\n", pid, stopped.Round(10_000), len(proc.Threads))
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	if damaged > 0 {
		return errorf(stderr, "process %d: %d entries of the goroutine list are damaged: the list above is partial", pid, damaged)
	}
	return exitOK
}
