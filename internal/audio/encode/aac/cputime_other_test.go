//go:build !unix

package aac

import "time"

// processCPU is unavailable here; BenchmarkEncode then reports only rtf.
func processCPU() (time.Duration, bool) { return 0, false }
