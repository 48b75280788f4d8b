package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The references below perform the windowed attention's, exp32's and
// GELUErf's operations with fma32Emulated, one rounding computed in
// float64 and independent of the compiler. On builds with nativeFMA32 the
// portable code uses the compiler's fused instruction instead, which is
// exact only where gc actually fuses (on amd64 it does not when an operand
// is a load it can fold into a plain multiply or add); these tests are what
// notices a loop that stopped fusing.

func exp32Emulated(x float32) float32 {
	if x < exp32Lo {
		return 0
	}
	if x > 0 {
		x = 0
	}
	y := float32(x*log2e32) + magic32
	n := y - magic32
	r := fma32Emulated(-n, ln2Hi32, x)
	r = fma32Emulated(-n, ln2Lo32, r)
	p := exp32Coef[exp32Terms-1]
	for i := exp32Terms - 2; i >= 0; i-- {
		p = fma32Emulated(p, r, exp32Coef[i])
	}
	e := int32(math.Float32bits(y)-math.Float32bits(magic32)) + 127
	return p * math.Float32frombits(uint32(e)<<23)
}

func geluErf1Emulated(v float32) float32 {
	z := math.Float32frombits(math.Float32bits(v)&^(1<<31)) * invSqrt2F32
	if z > 10 {
		z = 10
	}
	r := 1 / (z + 2)
	u := (2 - z) * r
	t := r + r
	p := geluErfCoef[len(geluErfCoef)-1]
	for i := len(geluErfCoef) - 2; i >= 0; i-- {
		p = fma32Emulated(p, u, geluErfCoef[i])
	}
	p = fma32Emulated(-v, v*0.5, p)
	h := exp32Emulated(p) * t * 0.5
	if v < 0 {
		return v * h
	}
	return v * (1 - h)
}

// windowsEmulated is AttendWindows's contract for float32 scores and sums:
// per head, scores as one fused chain over the head's dimensions times
// scale, exp32 of each minus their maximum, the sum in float64, and each
// output a fused chain over the keys of weight·value, weight = e·(1/sum)
// rounded to float32.
func windowsEmulated(q, k, v []float32, c *windowCase, scale float32) []float32 {
	d, hd := c.d(), c.hd
	out := make([]float32, len(c.lo)*d)
	for i := range c.lo {
		n := c.hi[i] - c.lo[i]
		if n == 0 {
			continue
		}
		for h := range c.heads {
			qh := q[i*d+h*hd : i*d+(h+1)*hd]
			s := make([]float32, n)
			mx := float32(math.Inf(-1))
			for j := range n {
				kj := k[(c.lo[i]+j)*d+h*hd:]
				var acc float32
				for x, qx := range qh {
					acc = fma32Emulated(qx, kj[x], acc)
				}
				s[j] = acc * scale
				mx = max(mx, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = exp32Emulated(s[j] - mx)
				sum += float64(s[j])
			}
			inv := float32(1 / sum)
			o := out[i*d+h*hd : i*d+(h+1)*hd]
			for j, e := range s {
				p := e * inv
				vj := v[(c.lo[i]+j)*d+h*hd:]
				for x := range o {
					o[x] = fma32Emulated(p, vj[x], o[x])
				}
			}
		}
	}
	return out
}

// TestPortableFMAContract checks the portable code bit for bit against the
// emulated references: exp32 and GELUErf over a sweep of arguments, and
// AttendWindows on every windowCase in float32 and bfloat16 storage.
func TestPortableFMAContract(t *testing.T) {
	t.Logf("nativeFMA32 = %v", nativeFMA32)
	r := rand.New(rand.NewPCG(61, 62))
	for i := range 200_000 {
		x := float32(-90 * r.Float64())
		if i%2 == 1 {
			x = float32(-2 * r.Float64())
		}
		if got, want := exp32(x), exp32Emulated(x); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("exp32(%v) = %v, emulated %v", x, got, want)
		}
		g := float32(8 * r.NormFloat64())
		if got, want := geluErf1(g), geluErf1Emulated(g); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("geluErf1(%v) = %v, emulated %v", g, got, want)
		}
	}
	// exp32Poly's constants are exp32Coef: the same Horner steps agree.
	for range 100_000 {
		x := float32((r.Float64() - 0.5) * math.Ln2)
		want := exp32Coef[exp32Terms-1]
		for i := exp32Terms - 2; i >= 0; i-- {
			want = fma32Emulated(want, x, exp32Coef[i])
		}
		if got := exp32Poly(x); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("exp32Poly(%v) = %v, Horner over exp32Coef %v", x, got, want)
		}
	}
	useImpl(t, implGeneric)
	useThreads(t, 1)
	for _, c := range windowCases(r) {
		d := c.d()
		q, k, v := randVec(r, len(c.lo)*d), randVec(r, c.nkeys*d), randVec(r, c.nkeys*d)
		scale := float32(1 / math.Sqrt(float64(c.hd)))
		want := windowsEmulated(q, k, v, &c, scale)
		if got := runWindows(&c, q, c.layout(k, v), scale, nil); !bitsEqual(got, want) {
			t.Fatalf("%v: float32 storage differs from the emulated contract", &c)
		}
		bf16Exact(k, v)
		want = windowsEmulated(q, k, v, &c, scale)
		kv := c.layout(k, v)
		kv16 := KV{K16: toBF16(kv.K), V16: toBF16(kv.V), Stride: kv.Stride, HeadStride: kv.HeadStride, Ring: kv.Ring, First: kv.First}
		if got := runWindows(&c, q, kv16, scale, nil); !bitsEqual(got, want) {
			t.Fatalf("%v: bfloat16 storage differs from the emulated contract", &c)
		}
	}
}
