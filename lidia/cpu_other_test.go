//go:build !unix

package lidia

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
