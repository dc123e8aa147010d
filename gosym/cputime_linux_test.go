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
