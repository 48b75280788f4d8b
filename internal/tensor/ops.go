package tensor

import "math"

// Dot returns the dot product of a and b[:len(a)].
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	if s, ok := dotSIMD(a, b); ok {
		return s
	}
	return dotGeneric(a, b)
}

// Axpy computes y += a·x.
func Axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	if axpySIMD(y, a, x) {
		return
	}
	for i := range y {
		y[i] += float32(a * x[i])
	}
}

// Add computes y += x.
func Add(y, x []float32) {
	x = x[:len(y)]
	if addSIMD(y, x) {
		return
	}
	for i := range y {
		y[i] += x[i]
	}
}

// AddMul computes y += s ⊙ x element by element, each product rounded to
// float32 before the sum (no fused multiply-add, as y + s*x in PyTorch).
func AddMul(y, s, x []float32) {
	s, x = s[:len(y)], x[:len(y)]
	if addMulSIMD(y, s, x) {
		return
	}
	for i := range y {
		y[i] += float32(s[i] * x[i])
	}
}

// Scale computes y *= a.
func Scale(y []float32, a float32) {
	if scaleSIMD(y, a) {
		return
	}
	for i := range y {
		y[i] *= a
	}
}

// LayerNorm normalises each of the m rows of x (width len(gamma)) into y:
// (x-mean)/sqrt(var+eps)·gamma + beta, with the biased variance, mean and
// variance accumulated in float64. beta may be nil. y may alias x.
func LayerNorm(y, x []float32, m int, gamma, beta []float32, eps float32) {
	d := len(gamma)
	_ = x[:m*d]
	_ = y[:m*d]
	if beta != nil {
		_ = beta[:d]
	}
	if m > 1 && m*d >= parMinElems {
		For(m, max(elemGrain/max(d, 1), 1), func(lo, hi int) {
			layerNormRows(y[lo*d:hi*d], x[lo*d:hi*d], hi-lo, gamma, beta, eps)
		})
		return
	}
	layerNormRows(y, x, m, gamma, beta, eps)
}

func layerNormRows(y, x []float32, m int, gamma, beta []float32, eps float32) {
	d := len(gamma)
	for i := range m {
		xr := x[i*d : (i+1)*d]
		yr := y[i*d : (i+1)*d]
		mean, inv := layerNormStats(xr, eps)
		if layerNormApplySIMD(yr, xr, mean, inv, gamma, beta) {
			continue
		}
		for k, v := range xr {
			nv := float32((float64(v) - mean) * inv)
			if beta != nil {
				yr[k] = float32(nv*gamma[k]) + beta[k]
			} else {
				yr[k] = nv * gamma[k]
			}
		}
	}
}

// layerNormStats returns the mean of x and 1/sqrt(var+eps).
func layerNormStats(x []float32, eps float32) (mean, inv float64) {
	d := float64(len(x))
	sum, ok := sumF64SIMD(x)
	if !ok {
		for _, v := range x {
			sum += float64(v)
		}
	}
	mean = sum / d
	vs, ok := sumSqDevSIMD(x, mean)
	if !ok {
		for _, v := range x {
			dv := float64(v) - mean
			vs += dv * dv
		}
	}
	return mean, 1 / math.Sqrt(vs/d+float64(eps))
}

// GELUTanh applies the tanh approximation of GELU ("gelu_new") in place:
// 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))), evaluated in float64 as the
// identical x/(1+exp(−2·√(2/π)·(x+0.044715·x³))), which has no cancellation
// for negative x. Results are float32-rounded float64 values.
func GELUTanh(x []float32) { elementwise(x, geluTanh) }

func geluTanh(x []float32) {
	if geluTanhSIMD(x) {
		return
	}
	for i, v := range x {
		x[i] = geluTanh1(v)
	}
}

// Element-wise operations on at least parMinElems values are spread over
// the worker pool in runs of elemGrain (a multiple of every vector width).
const (
	parMinElems = 1 << 16
	elemGrain   = 1 << 13
)

// elementwise applies the in-place operation f to x, in runs on the worker
// pool when x is long. f works value by value, so the cut never changes a
// result.
func elementwise(x []float32, f func([]float32)) {
	if len(x) >= parMinElems {
		For(len(x), elemGrain, func(lo, hi int) { f(x[lo:hi]) })
		return
	}
	f(x)
}

const (
	geluC  = 0.7978845608028654 // sqrt(2/pi)
	geluC3 = 0.044715
)

func geluTanh1(v float32) float32 {
	f := float64(v)
	t := -2 * geluC * (f + float64(geluC3*f*f*f))
	return float32(f / (1 + exp64(t)))
}

// exp64 is the float64 exponential of the kernels (the SIMD versions in
// _asm/vector.go do exactly these operations): t clamped to ±700, which is
// finite in float64 and far beyond what survives rounding to float32;
// n = round(t·log2 e); r = t − n·ln 2 in two fused steps; a degree-13 Taylor
// polynomial (truncation error < 2e-16 for |r| ≤ ln2/2); times 2ⁿ.
func exp64(t float64) float64 {
	t = min(max(t, -expClamp), expClamp)
	y := float64(t*log2e) + expMagic // no fusion: the kernels round the product
	n := y - expMagic
	r := math.FMA(-n, ln2Hi, t)
	r = math.FMA(-n, ln2Lo, r)
	p := expCoef[13]
	for i := 12; i >= 0; i-- {
		p = math.FMA(p, r, expCoef[i])
	}
	return p * math.Float64frombits(uint64(int64(math.Float64bits(y)-math.Float64bits(expMagic))+1023)<<52)
}

const (
	expClamp = 700
	log2e    = 1.4426950408889634
	expMagic = 6755399441055744.0 // 1.5·2⁵²: adding it rounds to an integer
	ln2Hi    = 6.93147180369123816490e-01
	ln2Lo    = 1.90821492927058770002e-10
)

// expCoef[i] = 1/i!.
var expCoef = func() [14]float64 {
	var c [14]float64
	f := 1.0
	for i := range c {
		if i > 0 {
			f *= float64(i)
		}
		c[i] = 1 / f
	}
	return c
}()

// GELUErf applies the exact GELU in place: 0.5·x·(1+erf(x/√2)) = x·Φ(x),
// in float32 as x·½·erfc(−x/√2) with erfc(z) = t·exp(P(u) − x²/2) (t =
// 1/(1+z/2), u = (2−z)/(2+z), P a degree-12 fit; see _asm/erf.go), so the
// negative tail has no cancellation. Results are within 1.2e-7·max(|y|, 1)
// of the exact GELU, and within 3 ulp for 99.98% of inputs above −3; every
// implementation gives the same bits.
func GELUErf(x []float32) { elementwise(x, geluErf) }

func geluErf(x []float32) {
	if geluErfSIMD(x) {
		return
	}
	for i, v := range x {
		x[i] = geluErf1(v)
	}
}

// geluErf1 is the scalar form of the geluerf kernels (_asm/erf.go): the
// same float32 operations in the same order.
func geluErf1(v float32) float32 {
	z := math.Float32frombits(math.Float32bits(v)&^(1<<31)) * invSqrt2F32
	if z > 10 {
		z = 10 // ½·erfc(10) is far below the smallest float32; keeps +Inf finite
	}
	r := 1 / (z + 2)
	u := (2 - z) * r
	t := r + r
	var p float32
	if nativeFMA32 {
		p = geluErfPoly(u)
	} else {
		p = geluErfCoef[len(geluErfCoef)-1]
		for i := len(geluErfCoef) - 2; i >= 0; i-- {
			if s, ok := fma32Sum(p, u, geluErfCoef[i]); ok {
				p = float32(s)
			} else {
				p = fma32(p, u, geluErfCoef[i])
			}
		}
	}
	p = fma32(-v, v*0.5, p) // p − x·(x/2), one rounding
	h := exp32(p) * t * 0.5
	if v < 0 {
		return v * h
	}
	return v * (1 - h)
}

// invSqrt2F32 is float32(1/√2).
const invSqrt2F32 = float32(1 / math.Sqrt2)

// Softmax replaces x with softmax(x), computed stably: exponentials and
// their sum in float64, then each value scaled by the float32 reciprocal.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := maxF32(x)
	s, ok := expSumSIMD(x, mx)
	if !ok {
		for i, v := range x {
			e := exp64(float64(v - mx))
			x[i] = float32(e)
			s += e
		}
	}
	Scale(x, float32(1/s))
}

// maxF32 returns the largest value of x (NaNs are skipped unless x[0] is NaN).
func maxF32(x []float32) float32 {
	if m, ok := maxSIMD(x); ok {
		return m
	}
	mx := x[0]
	for _, v := range x[1:] {
		if v > mx {
			mx = v
		}
	}
	return mx
}

// Argmax returns the index of the largest value (the first one on ties).
func Argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
