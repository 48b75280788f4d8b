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

// hasBF16Dot reports BFDOT (FEAT_BF16, Armv8.6; see cpuHasBF16): Apple M2
// and later, Neoverse V1/V2/N2 (Graviton 3 and 4), not Apple M1 or
// Cortex-A76 (Raspberry Pi 5). Where the OS does not report it the bf16
// mode is not offered (Matmul.Available falls back to f32).
//
// BFDOT's arithmetic is not VDPBF16PS's (see linear_arm64.go): on arm64
// the bf16 mode is its own arithmetic, and a matrix packed with
// PackBF16Dot is multiplied with the portable code's (VDPBF16PS) values
// only where BFDOT is missing or the generic kernels are chosen.
//
// The windowed attention's dot-product forms (KV.BF16Scores, KV.BF16Sums)
// have no BFDOT kernel: inside the NEON tiles their products are the
// portable code's (the VDPBF16PS values), about 100 times slower than the
// float32 attention, so Matmul.BF16Dot keeps the models off them on arm64
// (the codec computes as in f32 there). Their layout (bfloat16 keys, value
// rows in pairs) would suit BFDOT as it is, with arm64's own values.
var hasBF16Dot = cpuHasBF16()

func cvtBF16SIMD(dst []uint16, src []float32) int { return 0 }

func widenSIMD(dst []float32, src []uint16) int { return 0 }

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
