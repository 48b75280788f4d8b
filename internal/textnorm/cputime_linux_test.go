package textnorm

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread. On a machine
// shared with other work, wall-clock ns/op overstates what a request costs;
// the benchmarks also report CPU time per op from this.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
