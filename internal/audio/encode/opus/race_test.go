//go:build race

package opus

func init() { raceEnabled = true }
