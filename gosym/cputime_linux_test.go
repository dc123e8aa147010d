package gosym

import (
	"syscall"
	"unsafe"
)

// threadCPUTime returns the CPU time the calling thread has used, in
// nanoseconds: CLOCK_THREAD_CPUTIME_ID, which leaves out the time the
// thread waits for a CPU on a busy machine.
func threadCPUTime() (int64, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0, false
	}
	return ts.Nano(), true
}

// threadFaults returns the number of minor page faults of the calling
// thread (getrusage RUSAGE_THREAD): the first read of each page of a
// freshly mapped file is one.
func threadFaults() (int64, bool) {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Minflt), true
}
