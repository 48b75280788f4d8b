//go:build race

package deploy

// raceEnabled: the race detector instruments compress/flate, which makes
// gzipping a 20 MB binary take a minute.
const raceEnabled = true
