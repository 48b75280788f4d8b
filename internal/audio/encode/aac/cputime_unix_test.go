//go:build unix

package aac

import (
	"syscall"
	"time"
)

// processCPU returns the process's user plus system CPU time, which unlike
// wall time does not grow when other processes compete for the cores.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
