module github.com/gosym-dev/gosym

go 1.24
