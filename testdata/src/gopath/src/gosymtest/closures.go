package main

import (
	"gosymtest/leaf"
	"gosymtest/mid"
)

// counter returns a closure that captures and modifies c.
func counter(start int) func() int {
	c := start
	return func() int {
		c++
		return leaf.Mix(c)
	}
}

func apply(xs []int, f func(int) int) int {
	s := 0
	for i := 0; i < len(xs); i++ {
		s += f(xs[i])
	}
	return s
}

func closures(n int) int {
	next := counter(n)
	s := next() + next()
	k := 3 + n
	s += apply([]int{1, 2, 3}, func(x int) int {
		inner := func(y int) int {
			return y*k + mid.Step(y)
		}
		return inner(x) + inner(k)
	})
	return s
}
