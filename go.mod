module github.com/gosym-dev/gosym

go 1.24.0

require golang.org/x/arch v0.24.0
