module github.com/gosym-dev/gosym

go 1.24.0

require (
	github.com/google/pprof v0.0.0-20250602020802-c6617b811d0e
	golang.org/x/arch v0.24.0
)
