//go:build !race

package lidia

// raceEnabled reports a test binary built with -race, where the
// single-goroutine checks of every PC run on a sample, to save time.
const raceEnabled = false
