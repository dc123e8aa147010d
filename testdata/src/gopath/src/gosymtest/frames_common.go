//go:build go1.7
// +build go1.7

package main

import "runtime"

// callersFrames appends the frames CallersFrames returns for pcs,
// dropping the empty Frame that Go 1.9-1.11 return for a PC without a
// function.
func callersFrames(pcs []uintptr, fr []frame) []frame {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "" || f.File != "" {
			fr = append(fr, frame{f.Function, f.File, f.Line})
		}
		if !more {
			break
		}
	}
	return fr
}
