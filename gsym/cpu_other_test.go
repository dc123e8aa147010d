//go:build !unix

package gsym

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
