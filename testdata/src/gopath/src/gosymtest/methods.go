package main

import "gosymtest/shape"

// methodValues uses method values (the compiler generates the "-fm"
// wrappers) and a method expression.
func methodValues(n int) int {
	r := &shape.Rect{W: n, H: 2}
	area := r.Area
	name := r.Name
	c := shape.Circle{R: n}
	carea := c.Area
	expr := (*shape.Rect).Area
	var s shape.Shape = &shape.Square{Rect: shape.Rect{W: 2, H: 2}}
	sname := s.Name
	return area() + len(name()) + carea() + expr(r) + len(sname())
}
