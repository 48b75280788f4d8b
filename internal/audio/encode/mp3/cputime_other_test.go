//go:build !unix

package mp3

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
