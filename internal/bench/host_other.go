//go:build !linux && !darwin

package bench

// cpuModel knows no way to ask this system for the CPU's name.
func cpuModel() (string, map[string]bool) { return "", nil }
