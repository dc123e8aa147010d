//go:build go1.18
// +build go1.18

package main

// Generic code (shape-instantiated names) from Go 1.18.

type number interface{ ~int | ~int64 | ~float64 }

func sum[T number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

func init() {
	extras = append(extras, func(seed int) int {
		xs := make([]float64, 50000)
		for i := range xs {
			xs[i] = float64(seed + i)
		}
		is := make([]int, 50000)
		for i := range is {
			is[i] = seed ^ i
		}
		return int(sum(xs)) + sum(is)
	})
}
