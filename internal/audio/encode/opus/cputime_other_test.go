//go:build !unix

package opus

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
