//go:build cgo && gosymcgo
// +build cgo,gosymcgo

package main

// C code, in the cgo variant only (-tags gosymcgo with CGO_ENABLED=1).

/*
static int gosym_spin(int n) {
	volatile int s = 0;
	for (int i = 0; i < n * 1000; i++) s += i ^ n;
	return s;
}
*/
import "C"

func init() {
	extras = append(extras, func(seed int) int {
		return int(C.gosym_spin(C.int(seed%100 + 100)))
	})
}
