//go:build gc && !purego

package tensor

// The vector kernels process whole vectors (16 floats with AVX-512, 8 with
// AVX2); the last len%width elements are done here with the same operations.

// vecWidth returns the float32 lanes of the active kernels, 0 for generic.
func vecWidth() int {
	switch active {
	case implAVX512:
		return 16
	case implAVX2:
		return 8
	}
	return 0
}

// split returns the length done by the vector kernels.
func split(n int) (int, bool) {
	w := vecWidth()
	if w == 0 {
		return 0, false
	}
	return n &^ (w - 1), true
}

func dotSIMD(a, b []float32) (float32, bool) {
	nv, ok := split(len(a))
	if !ok {
		return 0, false
	}
	var s float32
	if nv > 0 {
		if active == implAVX512 {
			s = dotAVX512(&a[0], &b[0], nv)
		} else {
			s = dotAVX2(&a[0], &b[0], nv)
		}
	}
	for i := nv; i < len(a); i++ {
		s += float32(a[i] * b[i])
	}
	return s, true
}

func axpySIMD(y []float32, a float32, x []float32) bool {
	nv, ok := split(len(y))
	if !ok {
		return false
	}
	if nv > 0 {
		if active == implAVX512 {
			axpyAVX512(&y[0], a, &x[0], nv)
		} else {
			axpyAVX2(&y[0], a, &x[0], nv)
		}
	}
	for i := nv; i < len(y); i++ {
		y[i] += float32(a * x[i])
	}
	return true
}

// ropePairsSIMD rotates heads heads of len(c) values when the head is a
// whole number of vectors.
func ropePairsSIMD(x, c, s []float32, heads int) bool {
	w := vecWidth()
	if w == 0 || len(c)%w != 0 {
		return false
	}
	if active == implAVX512 {
		ropePairsAVX512(&x[0], &c[0], &s[0], len(c), heads)
	} else {
		ropePairsAVX2(&x[0], &c[0], &s[0], len(c), heads)
	}
	return true
}

func addMulSIMD(y, s, x []float32) bool {
	nv, ok := split(len(y))
	if !ok {
		return false
	}
	if nv > 0 {
		if active == implAVX512 {
			addMulAVX512(&y[0], &s[0], &x[0], nv)
		} else {
			addMulAVX2(&y[0], &s[0], &x[0], nv)
		}
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
		if active == implAVX512 {
			addAVX512(&y[0], &x[0], nv)
		} else {
			addAVX2(&y[0], &x[0], nv)
		}
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
		if active == implAVX512 {
			scaleAVX512(&y[0], a, nv)
		} else {
			scaleAVX2(&y[0], a, nv)
		}
	}
	for i := nv; i < len(y); i++ {
		y[i] *= a
	}
	return true
}

func sumF64SIMD(x []float32) (float64, bool) {
	nv, ok := split(len(x))
	if !ok {
		return 0, false
	}
	var s float64
	if nv > 0 {
		if active == implAVX512 {
			s = sumf64AVX512(&x[0], nv)
		} else {
			s = sumf64AVX2(&x[0], nv)
		}
	}
	for _, v := range x[nv:] {
		s += float64(v)
	}
	return s, true
}

func sumSqDevSIMD(x []float32, mean float64) (float64, bool) {
	nv, ok := split(len(x))
	if !ok {
		return 0, false
	}
	var s float64
	if nv > 0 {
		if active == implAVX512 {
			s = sumsqdevAVX512(&x[0], nv, mean)
		} else {
			s = sumsqdevAVX2(&x[0], nv, mean)
		}
	}
	for _, v := range x[nv:] {
		d := float64(v) - mean
		s += d * d
	}
	return s, true
}

func layerNormApplySIMD(y, x []float32, mean, inv float64, g, b []float32) bool {
	nv, ok := split(len(x))
	if !ok {
		return false
	}
	g = g[:len(x)]
	if b != nil {
		b = b[:len(x)]
	}
	if nv > 0 {
		var bp *float32
		if b != nil {
			bp = &b[0]
		}
		if active == implAVX512 {
			lnapplyAVX512(&y[0], &x[0], nv, mean, inv, &g[0], bp)
		} else {
			lnapplyAVX2(&y[0], &x[0], nv, mean, inv, &g[0], bp)
		}
	}
	for k := nv; k < len(x); k++ {
		v := float32((float64(x[k]) - mean) * inv)
		if b != nil {
			y[k] = float32(v*g[k]) + b[k]
		} else {
			y[k] = v * g[k]
		}
	}
	return true
}

func geluTanhSIMD(x []float32) bool {
	return mapSIMD(x, gelutanhAVX512, gelutanhAVX2, geluTanh1)
}

func geluErfSIMD(x []float32) bool {
	return mapSIMD(x, geluerfAVX512, geluerfAVX2, geluErf1)
}

// mapSIMD applies an in-place element-wise kernel to the whole vectors of x
// and its scalar form, which does the same operations, to the tail.
func mapSIMD(x []float32, avx512, avx2 func(x *float32, n int), one func(float32) float32) bool {
	nv, ok := split(len(x))
	if !ok {
		return false
	}
	if nv > 0 {
		if active == implAVX512 {
			avx512(&x[0], nv)
		} else {
			avx2(&x[0], nv)
		}
	}
	for i := nv; i < len(x); i++ {
		x[i] = one(x[i])
	}
	return true
}

func expSumSIMD(x []float32, mx float32) (float64, bool) {
	nv, ok := split(len(x))
	if !ok {
		return 0, false
	}
	var s float64
	if nv > 0 {
		if active == implAVX512 {
			s = expsumAVX512(&x[0], nv, mx)
		} else {
			s = expsumAVX2(&x[0], nv, mx)
		}
	}
	if t := len(x) - nv; t > 1 {
		// The tail, shorter than a vector: its exponentials in one
		// vector (padded with mx: exp(0)), added to the sum in order of
		// the elements, as the portable loop below does. A scalar exp64
		// costs about 11 ns.
		var buf [16]float32
		var e [16]float64
		w := vecWidth()
		copy(buf[:], x[nv:])
		for i := t; i < w; i++ {
			buf[i] = mx
		}
		if active == implAVX512 {
			exp64vAVX512(&buf[0], &e[0], mx)
		} else {
			exp64vAVX2(&buf[0], &e[0], mx)
		}
		copy(x[nv:], buf[:t])
		for _, v := range e[:t] {
			s += v
		}
		return s, true
	}
	for i := nv; i < len(x); i++ {
		e := exp64(float64(x[i] - mx))
		x[i] = float32(e)
		s += e
	}
	return s, true
}

func maxSIMD(x []float32) (float32, bool) {
	nv, ok := split(len(x))
	if !ok || nv == 0 {
		return 0, false
	}
	var m float32
	if active == implAVX512 {
		m = maxfAVX512(&x[0], nv)
	} else {
		m = maxfAVX2(&x[0], nv)
	}
	for _, v := range x[nv:] {
		if v > m {
			m = v
		}
	}
	return m, true
}
