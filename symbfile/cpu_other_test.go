//go:build !unix

package symbfile

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
