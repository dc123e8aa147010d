package gosym

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrNoBuildInfo is returned, wrapped with detail, by BuildInfo for a
// binary that records no build information: one built before Go 1.13, or
// not by the go command.
var ErrNoBuildInfo = errors.New("no build information")

// BuildInfo returns the binary's build information (Go version, main
// module, dependencies, settings) as runtime/debug reports it and
// debug/buildinfo reads it, also for stripped binaries and for formats
// debug/buildinfo does not search (Plan 9, an ELF file without section
// headers): the table finds the blob when it opens. The go command
// records it since Go 1.13; for an older binary the error, which wraps
// ErrNoBuildInfo, names the release where it is known. Build information
// that runtime/debug cannot parse gives an error that wraps ErrCorrupted
// and the parser's error. A binary built outside a module has a BuildInfo
// with the Go version only.
//
// Each call returns a new BuildInfo, which the caller may modify; it
// answers after Close too.
func (t *Table) BuildInfo() (*debug.BuildInfo, error) {
	if !t.hasBuildInfo {
		if v := t.version; v != "" {
			return nil, fmt.Errorf("gosym: %w: built by %s (the go command records it since Go 1.13)", ErrNoBuildInfo, v)
		}
		return nil, fmt.Errorf("gosym: %w", ErrNoBuildInfo)
	}
	bi, err := debug.ParseBuildInfo(t.modinfo)
	if err != nil {
		return nil, fmt.Errorf("gosym: build information: %w: %w", ErrCorrupted, err)
	}
	bi.GoVersion = t.version
	return bi, nil
}
