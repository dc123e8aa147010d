package main

import (
	"errors"

	"gosymtest/leaf"
	"gosymtest/shape"
)

// deferred has a closure defer and defers in a loop (heap-allocated
// defers even on releases with open-coded defers).
func deferred(n int) (r int) {
	defer func() {
		r += leaf.Mix(n)
	}()
	for i := 0; i < 3; i++ {
		defer addTo(&r, i)
	}
	return n
}

func addTo(p *int, v int) {
	*p += v
}

type failure struct {
	code int
}

func (f *failure) Error() string {
	return "failure"
}

var errBoom = errors.New("boom")

// recovered panics in four ways: a user panic, a nil dereference
// (sigpanic), an index out of range and an error value.
func recovered(n int) int {
	var nilRect *shape.Rect
	if n > 1000 {
		nilRect = &shape.Rect{}
	}
	s := catch(func() {
		panic(&failure{code: n + 2})
	})
	s += catch(func() {
		sink = nilRect.W
	})
	s += catch(func() {
		a := []int{1}
		sink = a[n+5]
	})
	s += catch(func() {
		panic(errBoom)
	})
	return s
}

func catch(f func()) (code int) {
	defer func() {
		if e := recover(); e != nil {
			code = 1
			if fl, ok := e.(*failure); ok {
				code = fl.code
			}
		}
	}()
	f()
	return 0
}
