// Package mid forms the middle of the inline chains:
// main -> mid.Outer -> mid.Step -> leaf.Fold -> leaf.Mix.
package mid

import "gosymtest/leaf"

// Step calls into another package.
func Step(x int) int {
	return leaf.Fold(x+1) - 2
}
