//go:build go1.18
// +build go1.18

package main

import (
	"gosymtest/leaf"
	"gosymtest/shape"
)

// This file is compiled only by Go 1.18+. Its instantiations give
// shape-stenciled names such as main.sumOf[go.shape.int], which the
// runtime prints as main.sumOf[...] from Go 1.21 on.

type number interface {
	~int | ~int64 | ~float64
}

func sumOf[T number](xs []T) T {
	var s T
	for i := 0; i < len(xs); i++ {
		s += xs[i]
	}
	return s
}

type stack[T any] struct {
	items []T
}

func (s *stack[T]) push(v T) {
	s.items = append(s.items, v)
}

func (s *stack[T]) pop() T {
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v
}

func mapTo[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func init() {
	extras = append(extras, generics)
}

func generics() int {
	a := sumOf([]int{1, 2, seed})
	b := sumOf([]float64{1.5, 2})
	var s stack[string]
	s.push("x")
	s.push("yy")
	var rs stack[*shape.Rect]
	rs.push(&shape.Rect{W: seed, H: 2})
	var cs stack[*shape.Circle]
	cs.push(&shape.Circle{R: seed})
	m := mapTo([]int{1, 2}, func(x int) string {
		if leaf.Mix(x) > 40 {
			return "big"
		}
		return "small"
	})
	return a + int(b) + len(s.pop()) + rs.pop().Area() + cs.pop().Area() + len(m)
}
