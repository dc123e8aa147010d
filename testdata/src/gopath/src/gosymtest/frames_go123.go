//go:build go1.23
// +build go1.23

package main

// Go 1.23+: CallersFrames synthesizes the outer inlined frames of a PC
// that is not followed by its outer virtual PCs, as long as another PC
// follows: the 0 terminator (which itself yields no frame).
const reportMethod = "callersframes-full"

func reportFrames(pc uintptr, fr []frame) []frame {
	return callersFrames([]uintptr{pc + 1, 0}, fr)
}
