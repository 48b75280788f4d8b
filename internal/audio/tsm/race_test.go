//go:build race

package tsm

// raceEnabled is set under the race detector, which slows this package's
// arithmetic some 10–30 times; the tests then run a subset (see testSpeeds).
// The package starts no goroutines, so the subset loses no race coverage.
const raceEnabled = true
