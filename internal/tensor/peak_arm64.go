//go:build gc && !purego

package tensor

// fmaPeak runs fmaPeakNEON for n rounds when the NEON kernels are active:
// each round one fused multiply-add a·b + acc on every lane of every
// accumulator. It returns the lanes' sums over the accumulators and the
// floating-point operations done (two per multiply-add), or ok false for
// the portable kernels.
func fmaPeak(a, b float32, n int) (sums []float32, flops int, ok bool) {
	if active != implNEON {
		return nil, 0, false
	}
	var out [4]float32
	fmaPeakNEON(&out[0], a, b, n)
	return out[:], 2 * 4 * 24 * n, true
}
