//go:build gc && !purego

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The bf16 mode on arm64 multiplies with BFDOT, whose arithmetic the Arm
// ARM defines (BFDotAdd, FPCR.EBF 0): per pair of bfloat16 inputs both
// products, their sum, and the sum's addition to the accumulator are each
// rounded to odd (truncated, then the lowest bit set if anything was cut
// off; overflow to infinity), with denormal inputs and results flushed to
// zero (sign kept) and NaNs replaced by the default NaN. bfdotAdd emulates
// it in Go; the kernels must match it bit for bit.

// defaultNaN is the NaN Arm's floating-point units produce in default-NaN
// mode, which BFDOT always uses.
const defaultNaN = 0x7fc00000

// roundOdd32 rounds v + lo, a float64 and the exact error of the addition
// that produced it (0 for an exact v), to float32 by BFDOT's rules: round
// to odd, results below 2⁻¹²⁶ flushed to zero with their sign, overflow to
// infinity. Rounding to odd in float64 first (53 bits) and then to float32
// (24) is exact rounding to odd of v + lo, as the intermediate has more
// than two extra bits.
func roundOdd32(v, lo float64) float32 {
	b := math.Float64bits(v)
	if lo != 0 {
		// v + lo is strictly between v and its neighbour on lo's side:
		// truncate towards zero, then set the sticky lowest bit.
		if (lo < 0) != (v < 0) {
			b--
		}
		b |= 1
	}
	sign := uint32(b>>63) << 31
	exp := int(b>>52&0x7ff) - 1023
	switch {
	case v == 0:
		return math.Float32frombits(sign)
	case exp < -126:
		return math.Float32frombits(sign)
	case exp > 127:
		return math.Float32frombits(sign | 0x7f800000)
	}
	mant := uint32(b >> 29 & (1<<23 - 1))
	if b&(1<<29-1) != 0 {
		mant |= 1
	}
	return math.Float32frombits(sign | uint32(exp+127)<<23 | mant)
}

// bfAdd is FPAdd_BF16: a + b rounded by roundOdd32; a and b are neither
// denormal nor NaN-free necessarily.
func bfAdd(a, b float32) float32 {
	a, b = ftz(a), ftz(b) // denormal inputs count as zero
	switch {
	case a != a || b != b:
		return math.Float32frombits(defaultNaN)
	case math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0):
		s := a + b // ±Inf, or NaN for Inf − Inf
		if s != s {
			return math.Float32frombits(defaultNaN)
		}
		return s
	case a == 0 && b == 0:
		return a + b // -0 only for -0 + -0
	}
	s := float64(a) + float64(b)
	// TwoSum: the exact error of s (no overflow: both are float32 values).
	bb := s - float64(a)
	lo := (float64(a) - (s - bb)) + (float64(b) - bb)
	if s == 0 {
		return 0 // exact cancellation: +0 (round to odd is not towards −∞)
	}
	return roundOdd32(s, lo)
}

// bfMul is BFMul: the product of two bfloat16 values (exact in float64),
// rounded by roundOdd32, with denormal inputs as zero.
func bfMul(a, b uint16) float32 {
	x, y := bf16DAZ(a), bf16DAZ(b)
	p := float64(x) * float64(y)
	if p != p {
		return math.Float32frombits(defaultNaN)
	}
	if p == 0 || math.IsInf(p, 0) {
		return float32(p)
	}
	return roundOdd32(p, 0)
}

// bfdotAdd is BFDotAdd: acc + (a₀b₀ + a₁b₁) the way BFDOT computes it.
func bfdotAdd(acc float32, a0, a1, b0, b1 uint16) float32 {
	return bfAdd(acc, bfAdd(bfMul(a0, b0), bfMul(a1, b1)))
}

// refBFDot is the arm64 bf16 mode's Linear written plainly from row-major
// bfloat16 weights: inputs rounded to bfloat16 (roundBF16), per output one
// chain of bfdotAdd over the pairs of k (the last one padded with zero),
// from +0, then + bias rounded to nearest.
func refBFDot(x []float32, w []uint16, bias []float32, m, n, k int) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var acc float32
			for p := 0; p < k; p += 2 {
				x0, w0 := roundBF16(x[i*k+p]), w[j*k+p]
				var x1, w1 uint16
				if p+1 < k {
					x1, w1 = roundBF16(x[i*k+p+1]), w[j*k+p+1]
				}
				acc = bfdotAdd(acc, x0, x1, w0, w1)
			}
			if bias != nil {
				acc += bias[j]
			}
			out[i*n+j] = acc
		}
	}
	return out
}

// TestRoundOdd32 checks the emulation's rounding on cases worked by hand.
func TestRoundOdd32(t *testing.T) {
	one := 1.0
	for _, tc := range []struct {
		v, lo float64
		want  uint32
	}{
		{one, 0, 0x3f800000},                                // exact
		{one + 0x1p-24, 0, 0x3f800001},                      // halfway: odd, not even
		{one + 0x1p-23 + 0x1p-24, 0, 0x3f800001},            // 1+ulp is odd already
		{one + 0x1p-22 + 0x1p-30, 0, 0x3f800003},            // 1+2ulp inexact: lowest bit set
		{one, 0x1p-60, 0x3f800001},                          // just above 1
		{one, -0x1p-60, 0x3f7fffff},                         // just below 1: the binade below, odd
		{-one, 0x1p-60, 0xbf7fffff},                         // just above −1
		{0x1p-127, 0, 0x00000000},                           // below 2⁻¹²⁶: flushed
		{-0x1p-127, 0, 0x80000000},                          // sign kept
		{0x1p-126, 0, 0x00800000},                           // smallest normal stays
		{0x1p128, 0, 0x7f800000},                            // overflow: infinity
		{float64(math.MaxFloat32) + 0x1p100, 0, 0x7f7fffff}, // truncated, never up
	} {
		if got := math.Float32bits(roundOdd32(tc.v, tc.lo)); got != tc.want {
			t.Errorf("roundOdd32(%g, %g) = %08x, want %08x", tc.v, tc.lo, got, tc.want)
		}
	}
}

// bfdotKernelImpls lists the kernel sets that run the dot layout with BFDOT:
// the NEON set where the CPU has FEAT_BF16.
func bfdotKernelImpls(t *testing.T) []impl {
	if !hasBF16Dot {
		t.Skip("no FEAT_BF16 here (run under qemu-aarch64-static -cpu max): the BFDOT kernels are not used")
	}
	return []impl{implNEON}
}

// TestLinearBFDot checks the BFDOT Linear on one and two threads, with and
// without bias, bit for bit against refBFDot, and within the mode's bound
// of the exact product: the inputs rounded to bfloat16 (2⁻⁹ relative) and
// per pair two roundings to odd (each under 2⁻²³ relative of what it
// rounds), so |y − exact| ≤ (2⁻⁹ + (k+1)·2⁻²³)·Σ|xᵢwᵢ|, written with
// slack as (2⁻⁸ + k·2⁻²²)·Σ|xᵢwᵢ|, plus the bias's rounding to nearest
// (2⁻²⁴ of the result, taken as 2⁻²³) and the flushes' 10⁻³⁰.
func TestLinearBFDot(t *testing.T) {
	impls := bfdotKernelImpls(t)
	useThreads(t, Threads())
	alwaysParallel(t)
	r := rand.New(rand.NewPCG(23, 16))
	for _, tc := range linearShapes {
		x := randVec(r, tc.m*tc.k)
		bias := randVec(r, tc.n)
		tm := testMats(r, tc.n, tc.k)[1]
		wb := toBF16(tm.vals)
		for _, b := range [][]float32{nil, bias} {
			want := refBFDot(x, wb, b, tc.m, tc.n, tc.k)
			exact := refLinear(x, tm.vals, b, tc.m, tc.n, tc.k)
			for _, im := range impls {
				for _, threads := range []int{1, 2} {
					name := fmt.Sprintf("%v/%v/bias=%v/threads=%d", tc, im, b != nil, threads)
					useImpl(t, im)
					SetThreads(threads)
					if !HasBF16Dot() {
						t.Fatalf("%s: HasBF16Dot false with FEAT_BF16 and the NEON kernels", name)
					}
					w := tm.mk()
					w.PackBF16Dot()
					y := linearChecked(t, name, x, tc.m, w, b)
					for i, v := range y {
						if math.Float32bits(v) != math.Float32bits(want[i]) {
							t.Fatalf("%s: y[%d] = %v (%08x), want %v (%08x)", name, i, v, math.Float32bits(v), want[i], math.Float32bits(want[i]))
						}
						var mag float64
						row, col := i/tc.n, i%tc.n
						for kk := range tc.k {
							mag += math.Abs(float64(x[row*tc.k+kk]) * float64(tm.vals[col*tc.k+kk]))
						}
						bound := (0x1p-8+float64(tc.k)*0x1p-22)*mag + 0x1p-23*math.Abs(exact[i]) + 1e-30
						if d := math.Abs(float64(v) - exact[i]); d > bound {
							t.Fatalf("%s: y[%d] = %v, exact %v: off by %g, bound %g", name, i, v, exact[i], d, bound)
						}
					}
				}
			}
		}
	}
}

// TestLinearBFDotSpecial feeds BFDOT what its rounding rules are about:
// denormal inputs, products that underflow or overflow, sums that cancel,
// infinities and NaNs, and halfway sums that round to odd (not even).
func TestLinearBFDotSpecial(t *testing.T) {
	impls := bfdotKernelImpls(t)
	r := rand.New(rand.NewPCG(5, 23))
	const m, n, k = 5, 70, 37
	x := randVec(r, m*k)
	for i := range x {
		switch i % 9 {
		case 0:
			x[i] *= 1e-39 // denormal float32: zero in bfloat16
		case 1:
			x[i] *= 1e-20 // products underflow
		case 2:
			x[i] *= 1e20 // products overflow
		case 3:
			x[i] = float32(1 + (i%5)*2) // small odd integers: exact, halfway sums
		}
	}
	x[7] = float32(math.Inf(1))
	x[k+11] = float32(math.NaN())
	w := make([]uint16, n*k)
	for i := range w {
		v := float32(r.NormFloat64())
		switch i % 11 {
		case 0:
			v *= 1e-19
		case 1:
			v *= 1e-39 // bfloat16 denormal or zero
		case 2:
			v *= 1e19
		case 3:
			v = float32(int(v*100)) / 64 // few bits: exact products, cancellations
		}
		w[i] = F32ToBF16(v)
	}
	w[3*k+5] = 0x0001 // the smallest bfloat16 denormal
	want := refBFDot(x, w, nil, m, n, k)
	for _, im := range impls {
		useImpl(t, im)
		mat := NewBF16(n, k, append([]uint16(nil), w...))
		mat.PackBF16Dot()
		y := make([]float32, m*n)
		Linear(y, x, m, mat, nil)
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: y[%d] = %v (%08x), want %v (%08x)", im, i, y[i], math.Float32bits(y[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestBFDotRoundsToOdd pins the difference between BFDOT and VDPBF16PS that
// the emulation is about, on one pair: 1 + 2⁻²⁴ (halfway between two
// float32 values) is 1 + 2⁻²³ in BFDOT (odd), 1 in VDPBF16PS (even).
func TestBFDotRoundsToOdd(t *testing.T) {
	x := []float32{1, 0x1p-12}    // exact in bfloat16
	w := []uint16{0x3f80, 0x3980} // 1, 2⁻¹²
	want := float32(1 + 0x1p-23)
	if got := refBFDot(x, w, nil, 1, 1, 2)[0]; got != want {
		t.Fatalf("emulation: %v, want %v", got, want)
	}
	impls := bfdotKernelImpls(t)
	for _, im := range impls {
		useImpl(t, im)
		mat := NewBF16(1, 2, append([]uint16(nil), w...))
		mat.PackBF16Dot()
		y := make([]float32, 1)
		Linear(y, x, 1, mat, nil)
		if y[0] != want {
			t.Fatalf("%v: %v, want %v", im, y[0], want)
		}
	}
}

// TestBF16ModeOffered checks the fallback policy on arm64: the bf16 mode is
// offered exactly where the CPU has FEAT_BF16 and the NEON kernels run, and
// falls back to f32 otherwise (-cpu cortex-a53, or the generic kernels).
func TestBF16ModeOffered(t *testing.T) {
	useImpl(t, implNEON)
	if got, want := BF16.Available(), map[bool]Matmul{true: BF16, false: F32}[cpuHasBF16()]; got != want {
		t.Errorf("NEON, FEAT_BF16 %v: BF16.Available() = %v, want %v", cpuHasBF16(), got, want)
	}
	if HasBF16Dot() != cpuHasBF16() {
		t.Errorf("NEON, FEAT_BF16 %v: HasBF16Dot() = %v", cpuHasBF16(), HasBF16Dot())
	}
	useImpl(t, implGeneric)
	if HasBF16Dot() || BF16.Available() != F32 {
		t.Errorf("generic kernels: HasBF16Dot() = %v, BF16.Available() = %v; want false, f32", HasBF16Dot(), BF16.Available())
	}
	t.Logf("FEAT_BF16: %v", cpuHasBF16())
}

// TestMatmulRequires: the fallback message names the arm64 features.
func TestMatmulRequires(t *testing.T) {
	for m, want := range map[Matmul]string{F32: "", BF16: "FEAT_BF16 (BFDOT)", Int8: "FEAT_DotProd (SDOT)"} {
		if got := m.Requires(); got != want {
			t.Errorf("%v.Requires() = %q, want %q", m, got, want)
		}
	}
}
