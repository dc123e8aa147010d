package objtest

import (
	"os"
	"testing"
)

// HeavyEnv names the environment variable that enables the heavy oracles:
// the tests that build many binaries (cross builds by the installed
// toolchain for every format and architecture, cgo builds, the toolchain's
// own binaries read whole) or compare every PC of the whole committed
// corpus. go test ./... leaves them out, so that it passes in a few
// minutes on a loaded 2-core machine; .ci/run's "heavy oracles" phase runs
// them on every submission (TESTING.md, "Commands").
const HeavyEnv = "GOSYM_HEAVY"

// Heavy reports whether the heavy oracles run (GOSYM_HEAVY=1).
func Heavy() bool { return os.Getenv(HeavyEnv) == "1" }

// SkipUnlessHeavy skips tb unless GOSYM_HEAVY=1.
func SkipUnlessHeavy(tb testing.TB) {
	tb.Helper()
	if !Heavy() {
		tb.Skipf("a heavy oracle: set %s=1 to run it (.ci/run does)", HeavyEnv)
	}
}
