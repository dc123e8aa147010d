//go:build !unix

package objtest

import "testing"

// special makes no special files here.
func special(t *testing.T, dir string) []string { return nil }
