//go:build go1.12 && !go1.23
// +build go1.12,!go1.23

package main

// Go 1.12-1.22: runtime.Callers expands inlining itself (one virtual PC
// per logical frame), so CallersFrames maps a PC to its innermost frame
// only.
const reportMethod = "callersframes-innermost"

func reportFrames(pc uintptr, fr []frame) []frame {
	return callersFrames([]uintptr{pc + 1}, fr)
}
