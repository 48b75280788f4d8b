package tensor

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

var opLengths = []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 256, 768, 1000, 3072}

// bitsEqual compares float32 slices bit for bit (any NaN equals any NaN).
func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool {
		return math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y)
	})
}

// ulps returns the distance of a and b in float32 units in the last place.
func ulps(a, b float32) int64 {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0x80000000 != (ib < 0x80000000) {
		return ulps(a, 0) + ulps(0, b)
	}
	if ia >= 0x80000000 {
		ia, ib = ia-0x80000000, ib-0x80000000
	}
	if ia > ib {
		return ia - ib
	}
	return ib - ia
}

// runImpls runs f with every kernel set and returns the results by set.
func runImpls[T any](t *testing.T, f func() T) map[impl]T {
	out := map[impl]T{}
	for _, im := range impls() {
		useImpl(t, im)
		out[im] = f()
	}
	active = detectImpl()
	return out
}

// TestElementwiseOps: Add, Scale, Axpy, AddMul do the same float32
// operations in every implementation, so they must agree bit for bit; and
// AddMul rounds its products before adding (no fused multiply-add).
func TestElementwiseOps(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range opLengths {
		x, y0, s := randVec(r, n), randVec(r, n), randVec(r, n)
		a := float32(r.NormFloat64())
		for name, op := range map[string]func(y []float32){
			"Add":    func(y []float32) { Add(y, x) },
			"Scale":  func(y []float32) { Scale(y, a) },
			"Axpy":   func(y []float32) { Axpy(y, a, x) },
			"AddMul": func(y []float32) { AddMul(y, s, x) },
		} {
			res := runImpls(t, func() []float32 {
				y := append([]float32(nil), y0...)
				op(y)
				return y
			})
			for im, y := range res {
				if !bitsEqual(y, res[implGeneric]) {
					t.Fatalf("%s n=%d: %v differs from generic", name, n, im)
				}
			}
			if name == "AddMul" {
				for i, got := range res[implGeneric] {
					p := float32(float64(s[i]) * float64(x[i])) // exact in float64, rounded once
					if want := float32(float64(y0[i]) + float64(p)); got != want {
						t.Fatalf("AddMul n=%d [%d] = %v, want %v (product rounded, then added)", n, i, got, want)
					}
				}
			}
		}
	}
}

func TestDotMax(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range opLengths {
		a, b := randVec(r, n), randVec(r, n+3)
		var want, sumAbs float64
		for i := range n {
			want += float64(a[i]) * float64(b[i])
			sumAbs += math.Abs(float64(a[i]) * float64(b[i]))
		}
		for im, got := range runImpls(t, func() float32 { return Dot(a, b) }) {
			if math.Abs(float64(got)-want) > 1e-6*sumAbs+1e-30 {
				t.Errorf("Dot n=%d %v = %v, want %v", n, im, got, want)
			}
		}
		if n == 0 {
			continue
		}
		m := a[r.IntN(n)] + 1
		a[r.IntN(n)] = m
		for im, got := range runImpls(t, func() float32 { return maxF32(a) }) {
			if got != slices.Max(a) {
				t.Errorf("max n=%d %v = %v, want %v", n, im, got, slices.Max(a))
			}
		}
	}
}

func TestLayerNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, d := range []int{1, 4, 15, 16, 17, 33, 256, 768} {
		m := 3
		x := randVec(r, m*d)
		for i := range x {
			x[i] = x[i]*3 + 5 // offset mean: checks the two-pass variance
		}
		g, b := randVec(r, d), randVec(r, d)
		for _, beta := range [][]float32{nil, b} {
			want := make([]float64, m*d)
			for i := range m {
				xr := x[i*d : (i+1)*d]
				var mean, vs float64
				for _, v := range xr {
					mean += float64(v)
				}
				mean /= float64(d)
				for _, v := range xr {
					vs += (float64(v) - mean) * (float64(v) - mean)
				}
				inv := 1 / math.Sqrt(vs/float64(d)+1e-5)
				for k, v := range xr {
					want[i*d+k] = (float64(v) - mean) * inv * float64(g[k])
					if beta != nil {
						want[i*d+k] += float64(beta[k])
					}
				}
			}
			res := runImpls(t, func() []float32 {
				y := make([]float32, m*d)
				LayerNorm(y, x, m, g, beta, 1e-5)
				// In place must give the same.
				z := append([]float32(nil), x...)
				LayerNorm(z, z, m, g, beta, 1e-5)
				if !bitsEqual(y, z) {
					t.Fatalf("LayerNorm in place differs (d=%d)", d)
				}
				return y
			})
			for im, y := range res {
				for i, v := range y {
					if !near(float64(v), want[i], 1e-6) {
						t.Fatalf("LayerNorm d=%d beta=%v %v: y[%d] = %v, want %v", d, beta != nil, im, i, v, want[i])
					}
				}
			}
		}
	}
}

// geluInputs mixes random values with the nasty ones.
func geluInputs(r *rand.Rand, n int) []float32 {
	x := randVec(r, n)
	for i := range x {
		x[i] *= 4
	}
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 5, -5, 10, -10, 13, -13, 20, -20, 100, -100,
		1e10, -1e10, 3e38, -3e38, float32(math.Inf(1)), float32(math.NaN()), -0.5, 0.5}
	copy(x, special)
	return x
}

// TestGELUTanh checks against the float64 value of x/(1+exp(−2u)) (which is
// 0.5·x·(1+tanh(u)) without its cancellation for negative x) within 2 ulp,
// against the tanh form itself within 1e-7·(1+|x|), and every implementation
// bit for bit against the portable one.
func TestGELUTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range append(opLengths, 4099) {
		x := geluInputs(r, max(n, 25))[:n]
		res := runImpls(t, func() []float32 {
			y := append([]float32(nil), x...)
			GELUTanh(y)
			return y
		})
		for im, y := range res {
			if !bitsEqual(y, res[implGeneric]) {
				for i := range y {
					if !bitsEqual(y[i:i+1], res[implGeneric][i:i+1]) {
						t.Fatalf("GELUTanh n=%d %v: x=%v gives %v, generic %v", n, im, x[i], y[i], res[implGeneric][i])
					}
				}
			}
		}
		for i, v := range x {
			f := float64(v)
			u := math.Sqrt(2/math.Pi) * (f + 0.044715*f*f*f)
			want := float32(f / (1 + math.Exp(-2*u)))
			tanhForm := 0.5 * f * (1 + math.Tanh(u))
			got := res[implGeneric][i]
			if math.Abs(float64(got)-tanhForm) > 1e-7*(1+math.Abs(f)) {
				t.Errorf("GELUTanh(%v) = %v, tanh form %v", v, got, tanhForm)
			}
			if math.IsInf(f, 0) || math.IsNaN(f) {
				if math.IsNaN(f) != math.IsNaN(float64(got)) || (!math.IsNaN(f) && got != float32(f)) {
					t.Errorf("GELUTanh(%v) = %v", v, got)
				}
				continue
			}
			if ulps(got, want) > 2 && math.Abs(float64(got-want)) > 1e-37 {
				t.Errorf("GELUTanh(%v) = %v, want %v (%d ulp)", v, got, want, ulps(got, want))
			}
		}
	}
}

// TestGELUErf checks every implementation bit for bit against the portable
// one, and the accuracy claims against the float64 math.Erfc formula: within
// 1.2e-7·max(|y|, 1) everywhere, within 8 ulp above −3 (where the outputs
// matter; the far tail is tiny).
func TestGELUErf(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	x := geluInputs(r, 20000)
	for i := 25; i < 2000; i++ { // dense around zero and the steep part
		x[i] = float32((r.Float64() - 0.7) * 8)
	}
	for _, n := range append(opLengths, len(x)) {
		in := x[:n]
		res := runImpls(t, func() []float32 {
			y := append([]float32(nil), in...)
			GELUErf(y)
			return y
		})
		for im, y := range res {
			if !bitsEqual(y, res[implGeneric]) {
				for i := range y {
					if !bitsEqual(y[i:i+1], res[implGeneric][i:i+1]) {
						t.Fatalf("GELUErf n=%d %v: x=%v gives %v, generic %v", n, im, in[i], y[i], res[implGeneric][i])
					}
				}
			}
		}
		for i, v := range in {
			f := float64(v)
			got := res[implGeneric][i]
			if math.IsNaN(f) {
				if !math.IsNaN(float64(got)) {
					t.Errorf("GELUErf(NaN) = %v", got)
				}
				continue
			}
			if math.IsInf(f, -1) {
				continue
			}
			want := 0.5 * f * math.Erfc(-f/math.Sqrt2)
			if math.IsInf(f, 1) {
				if !math.IsInf(float64(got), 1) {
					t.Errorf("GELUErf(+Inf) = %v", got)
				}
				continue
			}
			if d := math.Abs(float64(got) - want); d > 1.2e-7*max(math.Abs(want), 1) {
				t.Errorf("GELUErf(%v) = %v, want %v (off by %g)", v, got, want, d)
			}
			if u := ulps(got, float32(want)); f > -3 && u > 8 {
				t.Errorf("GELUErf(%v) = %v, want %v (%d ulp)", v, got, float32(want), u)
			}
		}
	}
}

// TestFMA32 checks the portable single-rounding fused multiply-add against
// big-float arithmetic, including halfway cases of the float64 sum.
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	type tc struct{ a, b, c float32 }
	cases := []tc{
		// 1+2⁻²⁴ is halfway between float32 1 and 1+2⁻²³; the tiny c decides.
		{1 + 1.0/(1<<12), 1 + 1.0/(1<<12), -1.0 / (1 << 11)}, // (1+2⁻¹²)² − 2⁻¹¹ = 1 + 2⁻²⁴
		{3, 1.0 / 3, 0}, {1e30, 1e30, -1e38}, {-0, 5, 0}, {1e-30, 1e-20, 1e-45},
	}
	for range 200000 {
		a, b := float32(r.NormFloat64()), float32(r.NormFloat64())
		c := -a * b // near cancellation
		switch r.IntN(3) {
		case 0:
			c = float32(r.NormFloat64())
		case 1:
			c = math.Nextafter32(c, float32(r.NormFloat64()))
		}
		cases = append(cases, tc{a, b, c})
	}
	// Halfway cases: p + c exactly on a float32 midpoint in float64 but not
	// exactly: a·b = 1 + 2⁻²⁴ + tiny parts, c shifts to the midpoint.
	for range 20000 {
		m := uint32(r.IntN(1 << 23))
		a := math.Float32frombits(0x3f800000 | m)
		b := float32(1 + math.Ldexp(float64(r.IntN(1<<10)), -23))
		p := float64(a) * float64(b)
		mid := float64(float32(p)) + math.Ldexp(1, -24)
		cases = append(cases, tc{a, b, float32(mid - p)})
	}
	for _, c := range cases {
		got, want := fma32(c.a, c.b, c.c), exact(c.a, c.b, c.c)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", c.a, c.b, c.c, got, want)
		}
	}
}

// TestFMA32Fast checks fma32's direct rounding against its tie path, which
// decides every sum with the error term, on random bit patterns (subnormal,
// huge, infinite and NaN operands included), near-cancelling sums, and sums
// built so that rounding to float64 then float32 is wrong.
func TestFMA32Fast(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	n := 100_000
	if longTests() {
		n = 10_000_000
	}
	for i := range n {
		a, b, c := math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32())
		switch i % 4 {
		case 1: // products and sums near 1
			a, b = float32(r.NormFloat64()), float32(r.NormFloat64())
			c = math.Nextafter32(-a*b, float32(r.NormFloat64()))
		case 2, 3:
			// Double rounding: c has an odd last bit and a·b is half its
			// ulp less a part too small for float64, so the float64 sum is
			// the midpoint, which rounds to even, away from the exact sum.
			// Case 3 puts c in float32's subnormal range, where more than
			// 29 bits are dropped.
			k := 16 + r.IntN(7)
			e, fb := r.IntN(200)-100, 23 // c's exponent and fraction bits
			if i%4 == 3 {
				e, fb = -127, 22
			}
			c = float32(math.Ldexp(1+math.Ldexp(float64(2*r.IntN(1<<(fb-1))+1), -fb), e))
			h := e - fb - 1 // half c's ulp is 2^h
			a = float32(math.Ldexp(1+math.Ldexp(1, -k), h/2))
			b = float32(math.Ldexp(1-math.Ldexp(1, -k), h-h/2))
			if r.IntN(2) == 0 {
				a = -a
			}
		}
		got, want := fma32(a, b, c), fma32Tie(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, tie path %v", a, b, c, got, want)
		}
	}
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	inf := float32(math.Inf(1))
	cases := [][]float32{{1000, 1001, 999}, {0}, {-inf, 0, -inf}, {5, 5, 5, 5}, {-100, 100}}
	for _, n := range opLengths[1:] {
		v := randVec(r, n)
		for i := range v {
			v[i] *= 10
		}
		cases = append(cases, v)
	}
	for _, c := range cases {
		mx := slices.Max(c)
		var sum float64
		for _, v := range c {
			sum += math.Exp(float64(v - mx))
		}
		res := runImpls(t, func() []float32 {
			y := append([]float32(nil), c...)
			Softmax(y)
			return y
		})
		for im, y := range res {
			var total float64
			for i, v := range y {
				want := math.Exp(float64(c[i]-mx)) / sum
				if math.Abs(float64(v)-want) > 2e-7*want+1e-38 {
					t.Fatalf("Softmax %v len %d: y[%d] = %v, want %v", im, len(c), i, v, want)
				}
				total += float64(v)
			}
			if math.Abs(total-1) > 1e-5 {
				t.Fatalf("Softmax %v sums to %v", im, total)
			}
		}
	}
}

// TestExp64 checks the kernels' exponential against math.Exp.
func TestExp64(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for i := range 100000 {
		x := (r.Float64() - 0.5) * 1400
		if i%2 == 0 {
			x /= 100
		}
		got, want := exp64(x), math.Exp(x)
		if math.Abs(got-want) > 1e-15*want {
			t.Fatalf("exp64(%v) = %v, want %v", x, got, want)
		}
	}
	for _, c := range []struct{ in, want float64 }{{0, 1}, {-1000, math.Exp(-700)}, {1000, math.Exp(700)}} {
		if got := exp64(c.in); math.Abs(got-c.want) > 1e-15*c.want {
			t.Errorf("exp64(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(exp64(math.NaN())) {
		t.Error("exp64(NaN) is not NaN")
	}
}

func ExampleKernels() {
	k := Kernels()
	fmt.Println(k == "avx512" || k == "avx2" || k == "neon" || k == "generic")
	// Output: true
}

// TestParallelElementwise: large GELU and LayerNorm calls run on the worker
// pool; every value equals the single-threaded one, whatever the thread
// count and whether the length is a multiple of the runs.
func TestParallelElementwise(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{parMinElems - 1, parMinElems, 3*parMinElems + 5} {
		x := randVec(r, n)
		for _, op := range []struct {
			name     string
			par, one func([]float32)
		}{
			{"GELUErf", GELUErf, geluErf},
			{"GELUTanh", GELUTanh, geluTanh},
		} {
			want := append([]float32(nil), x...)
			op.one(want)
			for _, threads := range []int{1, 2, 3} {
				SetThreads(threads)
				got := append([]float32(nil), x...)
				op.par(got)
				if !bitsEqual(got, want) {
					t.Fatalf("%s n=%d threads=%d differs from one run", op.name, n, threads)
				}
			}
		}
		for _, d := range []int{256, 768, 1000} {
			m := n / d
			g, b := randVec(r, d), randVec(r, d)
			want := make([]float32, m*d)
			for i := range m {
				LayerNorm(want[i*d:(i+1)*d], x[i*d:(i+1)*d], 1, g, b, 1e-5)
			}
			for _, threads := range []int{1, 2, 3} {
				SetThreads(threads)
				got := make([]float32, m*d)
				LayerNorm(got, x, m, g, b, 1e-5)
				if !bitsEqual(got, want) {
					t.Fatalf("LayerNorm %d×%d threads=%d differs from row by row", m, d, threads)
				}
			}
		}
	}
}

// TestFor: every item is visited exactly once, for any n and grain.
func TestFor(t *testing.T) {
	useThreads(t, 2)
	for _, n := range []int{0, 1, 7, 100, 1000} {
		for _, grain := range []int{0, 1, 3, 64, 5000} {
			seen := make([]int32, n)
			For(n, grain, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n=%d grain=%d: item %d visited %d times", n, grain, i, c)
				}
			}
		}
	}
}
