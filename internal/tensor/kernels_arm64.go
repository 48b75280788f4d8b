//go:build gc && !purego

package tensor

import "golang.org/x/sys/cpu"

// The arm64 kernel set: Advanced SIMD (NEON), which every arm64 CPU has.
// The entry points below without a NEON kernel report that they did
// nothing, as in kernels_portable.go, and their callers run the portable
// code; the accelerated ones are in linear_arm64.go, attend_arm64.go,
// window_arm64.go (with the shared window_driver.go) and ops_arm64.go.

func detectImpl() impl {
	if implAvailable(implNEON) {
		return implNEON
	}
	return implGeneric
}

func implAvailable(i impl) bool {
	// Advanced SIMD is part of the base arm64 architecture (Go's arm64
	// port requires it), so there is nothing to detect; and not every OS
	// reports it (golang.org/x/sys/cpu leaves the flags false on macOS).
	return i == implNEON || i == implGeneric
}

// There is no arm64 kernel for the bfloat16 dot products of PackBF16Dot:
// their results are defined by VDPBF16PS (each pair accumulated into the
// float32 sum in turn, inputs and results flushed to zero), and BFDOT adds
// a pair's products before the sum and rounds otherwise, so it cannot give
// the same values; golang.org/x/sys/cpu does not report FEAT_BF16 either.
// HasBF16Dot is false: the bf16 mode falls back to f32
// (Matmul.Available), and a matrix packed with PackBF16Dot anyway is
// multiplied by the portable code.
const hasBF16Dot = false

func cvtBF16SIMD(dst []uint16, src []float32) int { return 0 }

func widenSIMD(dst []float32, src []uint16) int { return 0 }

func linearBF16DotSIMD(y []float32, xb []uint16, m int, w *Mat, bias []float32, serial bool) bool {
	return false
}

func absMaxSIMD(v []float32) (uint32, int) { return 0, 0 }

func quantSIMD(q []int8, v []float32, inv float32) int { return 0 }

// hasDotProd reports SDOT (FEAT_DotProd, Armv8.2; x/sys/cpu calls it
// ASIMDDP): Cortex-A55/A75 and later, Neoverse N1 and later, Apple M1 and
// later. Where the OS does not report it the int8 mode is not offered.
var hasDotProd = cpu.ARM64.HasASIMDDP

// i8SetFor returns the int8 tiles under the NEON set if the CPU has SDOT,
// else nil: HasInt8Dot is false and the int8 mode is not offered, as on
// amd64 CPUs without VNNI.
func i8SetFor(i impl) *gemmSet[int8] {
	if i == implNEON && hasDotProd {
		return gemmSetI8
	}
	return nil
}
