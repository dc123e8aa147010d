package mid

// Outer is the top of a four-level chain spread over four files in two
// packages.
func Outer(x int) int {
	if x < 0 {
		x = -x
	}
	return Step(x) + 1
}

// Loop is not inlinable (it loops on old releases and is large on new
// ones); it calls the chain from several call sites.
func Loop(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += Outer(i)
		if s > 1000000 {
			s -= Step(s)
		}
	}
	return s
}
