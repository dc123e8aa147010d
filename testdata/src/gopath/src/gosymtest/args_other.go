//go:build !linux
// +build !linux

package main

// The self-report reads the executable as ELF and is linux-only.

func selfReportRequested() bool { return false }

func selfReport() {}
