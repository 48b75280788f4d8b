//go:build !race

package tsm

const raceEnabled = false
