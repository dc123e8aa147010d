//go:build cgo && gosymcgo
// +build cgo,gosymcgo

package main

// Compiled only in the corpus's cgo variant (-tags gosymcgo with
// CGO_ENABLED=1), so that default builds stay pure Go.

/*
static int gosym_twice(int x) { return 2 * x; }
*/
import "C"

func init() {
	extras = append(extras, func() int {
		return int(C.gosym_twice(C.int(seed)))
	})
}
