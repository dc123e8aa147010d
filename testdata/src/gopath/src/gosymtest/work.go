package main

import (
	"gosymtest/leaf"
	"gosymtest/mid"
	"gosymtest/shape"
)

func work(n int) int {
	total := 0
	total += chain(n)
	total += chain(n+7) * 2
	total += mid.Loop(n + 10)
	total += shape.Sum(shape.All(n))
	total += methodValues(n)
	total += closures(n)
	total += deferred(n)
	total += recovered(n)
	total += big(n % 211)
	total += goroutine(n)
	for i := 0; i < len(extras); i++ {
		total += extras[i]()
	}
	return total
}

// chain is small enough to be inlined into its callers on Go 1.12+,
// giving five-level inline trees: chain -> mid.Outer -> mid.Step ->
// leaf.Fold -> leaf.Mix.
func chain(x int) int {
	return mid.Outer(x) + 1
}

func goroutine(n int) int {
	ch := make(chan int)
	go func() {
		ch <- chain(n) + leaf.Mix(n)
	}()
	return <-ch
}
