//go:build gc && (amd64.v3 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x)

package tensor

// nativeFMA32 is true where gc compiles a float32 a*b + c into the CPU's
// fused multiply-add, one rounding (every 64-bit architecture it fuses on,
// and amd64 built with GOAMD64=v3 or later). The portable loops of the
// windowed attention, exp32 and GELUErf then use it instead of emulating
// the single rounding in float64, several times faster and with the same
// bits. TestFMA32 checks the instruction against big-float arithmetic.
const nativeFMA32 = true

// fma32 returns a·b + c rounded once to float32, as the SIMD kernels' fused
// multiply-add does. No conversion separates the product from the sum, so
// the compiler fuses them (the Go spec allows it; gc does on this build).
func fma32(a, b, c float32) float32 { return a*b + c }
