//go:build !go1.7
// +build !go1.7

package main

import "runtime"

// Before Go 1.7 there is no CallersFrames: the self-report asks
// FuncForPC for the physical function's name and FileLine for the
// position (which is the innermost inlined position).
const reportMethod = "funcforpc"

func reportFrames(pc uintptr, fr []frame) []frame {
	f := runtime.FuncForPC(pc)
	if f == nil {
		return fr
	}
	file, line := f.FileLine(pc)
	return append(fr, frame{f.Name(), file, line})
}
