//go:build !linux

package gosym

// threadCPUTime is only implemented on Linux.
func threadCPUTime() (int64, bool) { return 0, false }

// threadFaults is only implemented on Linux.
func threadFaults() (int64, bool) { return 0, false }
