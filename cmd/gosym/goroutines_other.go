//go:build !linux

package main

import (
	"io"
	"runtime"
)

// goroutinesLive reports that live processes are read on Linux only
// (package liveproc).
func goroutinesLive(pid, maxFrames int, asJSON bool, stdout, stderr io.Writer) int {
	return errorf(stderr, "process %d: reading a live process needs Linux (ptrace), not %s", pid, runtime.GOOS)
}
