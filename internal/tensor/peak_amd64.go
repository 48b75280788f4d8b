//go:build gc && !purego

package tensor

// fmaPeak runs the active kernel set's fmaPeak loop for n rounds: each
// round one fused multiply-add a·b + acc on every lane of every
// accumulator. It returns the lanes' sums over the accumulators and the
// floating-point operations done (two per multiply-add), or ok false where
// the kernel set has no such loop.
func fmaPeak(a, b float32, n int) (sums []float32, flops int, ok bool) {
	var out [16]float32
	switch active {
	case implAVX512:
		fmaPeakAVX512(&out[0], a, b, n)
		return out[:16], 2 * 16 * 16 * n, true
	case implAVX2:
		fmaPeakAVX2(&out[0], a, b, n)
		return out[:8], 2 * 8 * 12 * n, true
	}
	return nil, 0, false
}
