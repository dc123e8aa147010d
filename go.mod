module github.com/gosym-dev/gosym

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261016150608-1facf8f91b50
	golang.org/x/arch v0.24.0
)
