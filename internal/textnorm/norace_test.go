//go:build !race

package textnorm

// raceEnabled shrinks the pathological inputs under the race detector.
const raceEnabled = false
