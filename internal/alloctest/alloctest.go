// Package alloctest measures how much heap memory a call allocates, for
// tests that check that hostile counts in a file do not size allocations.
package alloctest

import "runtime"

// Bytes returns the number of heap bytes allocated while f runs. The
// allocations of other goroutines running meanwhile are counted too, so a
// test that uses it must not run in parallel with others.
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
