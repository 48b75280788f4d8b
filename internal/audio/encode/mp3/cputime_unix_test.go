//go:build unix

package mp3

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the test process, so the
// benchmark can report cost independently of other load on the machine.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
