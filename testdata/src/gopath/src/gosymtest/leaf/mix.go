// Package leaf holds tiny functions that every Go release can inline.
package leaf

// Bias is a variable so that the compiler cannot fold calls away.
var Bias = 3

// Mix is a leaf function: it calls nothing.
func Mix(x int) int {
	return x*31 + Bias
}
