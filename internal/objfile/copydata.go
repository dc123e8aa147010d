package objfile

// CopyData copies src, bytes of an object's memory (a slice of what its
// SectionData returned), into dst, and returns the number of bytes
// copied, as the built-in copy does. For an *object.File made by
// object.Open, whose memory is a mapping of the file, the bytes are read
// from the file with pread(2) while it is open: reading bytes of a fresh
// mapping costs a page fault per page, many times a pread on a virtual
// machine (BENCHMARKS.md, "Big binaries"). Package object sets it when it
// is initialized; readers use it for what they read once, when they open
// a table, and keep slices of the memory for the rest.
var CopyData = func(obj any, dst, src []byte) int { return copy(dst, src) }
