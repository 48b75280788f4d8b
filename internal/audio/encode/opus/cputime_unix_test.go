//go:build unix

package opus

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, so that
// BenchmarkEncode can report a real-time factor that does not depend on how
// many other processes share the machine.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
