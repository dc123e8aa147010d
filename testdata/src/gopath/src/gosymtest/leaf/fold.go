package leaf

// Fold calls Mix; it is inlined only by releases with mid-stack inlining
// (Go 1.12+), which then produces a two-level inline tree.
func Fold(x int) int {
	y := Mix(x)
	return y ^ (x >> 3)
}
