// Package exp32 holds the constants of the float32 exponential that the
// attention and GELU kernels compute, shared by the amd64 generator (..)
// and the arm64 one (../arm64); exp32 in package tensor (window.go) does
// the same operations with the same values, which the amd64 generator
// writes into ../../exp32_coef.go.
//
// 0 below ln 2⁻¹²⁶; else x clamped to at most 0 keeping NaN (softmax
// arguments are never positive); n = round(x·log2 e) with the 1.5·2²³
// trick; r = x − n·ln 2 in two fused steps; the degree-7 Taylor polynomial
// by Horner with FMAs (truncation < 1e-8 relative for |r| ≤ ln2/2); times
// 2ⁿ built in the exponent bits.
package exp32

const (
	Lo    = -87.3365478515625 // float32(ln 2⁻¹²⁶)
	Log2e = 1.4426950216293335
	Magic = 12582912.0 // 1.5·2²³
	Ln2Hi = 0.6931471824645996
	Ln2Lo = -1.9046542121259336e-09
	Terms = 8 // polynomial coefficients
)

// Coef returns the polynomial's coefficients, c[i] = float32(1/i!).
func Coef() [Terms]float32 {
	var c [Terms]float32
	f := 1.0
	for i := range c {
		if i > 0 {
			f *= float64(i)
		}
		c[i] = float32(1 / f)
	}
	return c
}
