//go:build go1.7 && !go1.9
// +build go1.7,!go1.9

package main

// Go 1.7 and 1.8 have CallersFrames but no inline tree: one physical
// frame per PC.
const reportMethod = "callersframes-physical"

func reportFrames(pc uintptr, fr []frame) []frame {
	return callersFrames([]uintptr{pc + 1}, fr)
}
