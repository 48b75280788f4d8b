//go:build race

package textnorm

// raceEnabled shrinks the pathological inputs: the race detector slows the
// single-goroutine scans tenfold and has nothing to find in them.
const raceEnabled = true
