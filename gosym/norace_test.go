//go:build !race

package gosym

// raceEnabled reports a test binary built with -race, where sync.Pool
// drops items at random, so that pooled memory is allocated again.
const raceEnabled = false
