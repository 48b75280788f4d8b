//go:build gc && !purego

package tensor

// The element-wise NEON kernels take whole vectors of four floats; the last
// len%4 elements are done here with the same operations. Of the
// activations GELUErf has a NEON kernel (the codec's MLPs: a few per cent
// of a frame once the matrix products are NEON); the reductions, norms,
// GELUTanh and RoPE run the portable code.

// split returns the length done by the NEON kernels, and whether they run.
func split(n int) (int, bool) {
	if active != implNEON {
		return 0, false
	}
	return n &^ 3, true
}

func axpySIMD(y []float32, a float32, x []float32) bool {
	nv, ok := split(len(y))
	if !ok {
		return false
	}
	if nv > 0 {
		axpyNEON(&y[0], a, &x[0], nv)
	}
	for i := nv; i < len(y); i++ {
		y[i] += float32(a * x[i])
	}
	return true
}

func addMulSIMD(y, s, x []float32) bool {
	nv, ok := split(len(y))
	if !ok {
		return false
	}
	if nv > 0 {
		addMulNEON(&y[0], &s[0], &x[0], nv)
	}
	for i := nv; i < len(y); i++ {
		y[i] += float32(s[i] * x[i])
	}
	return true
}

func addSIMD(y, x []float32) bool {
	nv, ok := split(len(y))
	if !ok {
		return false
	}
	if nv > 0 {
		addNEON(&y[0], &x[0], nv)
	}
	for i := nv; i < len(y); i++ {
		y[i] += x[i]
	}
	return true
}

func scaleSIMD(y []float32, a float32) bool {
	nv, ok := split(len(y))
	if !ok {
		return false
	}
	if nv > 0 {
		scaleNEON(&y[0], a, nv)
	}
	for i := nv; i < len(y); i++ {
		y[i] *= a
	}
	return true
}

func dotSIMD(a, b []float32) (float32, bool)                                    { return 0, false }
func ropePairsSIMD(x, c, s []float32, heads int) bool                           { return false }
func sumF64SIMD(x []float32) (float64, bool)                                    { return 0, false }
func sumSqDevSIMD(x []float32, mean float64) (float64, bool)                    { return 0, false }
func layerNormApplySIMD(y, x []float32, mean, inv float64, g, b []float32) bool { return false }
func geluTanhSIMD(x []float32) bool                                             { return false }
func expSumSIMD(x []float32, mx float32) (float64, bool)                        { return 0, false }
func maxSIMD(x []float32) (float32, bool)                                       { return 0, false }

func geluErfSIMD(x []float32) bool {
	nv, ok := split(len(x))
	if !ok {
		return false
	}
	if nv > 0 {
		geluErfNEON(&x[0], nv)
	}
	for i := nv; i < len(x); i++ {
		x[i] = geluErf1(x[i])
	}
	return true
}
