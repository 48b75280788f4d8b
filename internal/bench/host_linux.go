package bench

import "os"

// cpuModel reads the model and flags from /proc/cpuinfo.
func cpuModel() (string, map[string]bool) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "", nil
	}
	return parseCPUInfo(b)
}
