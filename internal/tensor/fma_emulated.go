//go:build !(gc && (amd64.v3 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x))

package tensor

// nativeFMA32 is false where gc does not fuse float32 operations (amd64
// below GOAMD64=v3, 386, arm, mips, wasm) or the compiler is not gc: fma32
// emulates the single rounding in float64.
const nativeFMA32 = false

// fma32 returns a·b + c rounded once to float32, as the SIMD kernels' fused
// multiply-add does.
func fma32(a, b, c float32) float32 { return fma32Emulated(a, b, c) }
