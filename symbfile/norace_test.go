//go:build !race

package symbfile

// pcStride is the step between the PCs the every-PC checks look at: 1,
// and 16 in a test binary built with -race (these checks run on one
// goroutine, and take minutes under the race detector).
const pcStride = 1
