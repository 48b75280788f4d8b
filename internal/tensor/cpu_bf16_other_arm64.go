//go:build gc && !purego && !linux && !darwin

package tensor

// cpuHasBF16 is false where no way to ask for FEAT_BF16 is wired up: the
// bf16 mode falls back to f32.
func cpuHasBF16() bool { return false }
