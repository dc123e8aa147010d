package testcorpus

import "github.com/gosym-dev/gosym/internal/hostrun"

// Runs386 reports whether this machine runs a linux/386 binary of Go
// 1.minor, so that the corpus records its self-report: always where the
// kernel runs 386 programs; under qemu-i386 (internal/hostrun), from Go
// 1.9 on, as older runtimes cannot start a thread there (clone fails with
// EINVAL under qemu-i386 7.2: "runtime: failed to create new OS thread").
func Runs386(minor int) bool {
	return hostrun.Native("386") || minor >= 9
}
