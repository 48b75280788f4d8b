//go:build !linux

package textnorm

import "time"

// threadCPU is unavailable here; the benchmarks report wall time only.
func threadCPU() time.Duration { return 0 }
