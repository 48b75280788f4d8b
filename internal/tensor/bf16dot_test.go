package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refDot is the definition of the dot-product Linear written plainly from
// row-major weights: inputs rounded to bfloat16, then per output one chain
// over the pairs, (acc + x₁w₁) + x₀w₀, each sum rounded to float32 with
// denormal inputs and results flushed to zero, then + bias.
func refDot(x []float32, w []uint16, bias []float32, m, n, k int) []float32 {
	daz := func(v uint16) float32 {
		if v&0x7f80 == 0 {
			return 0
		}
		return math.Float32frombits(uint32(v) << 16)
	}
	flush := func(f float32) float32 {
		if math.Abs(float64(f)) < 0x1p-126 {
			return float32(math.Copysign(0, float64(f)))
		}
		return f
	}
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var acc float32
			for p := 0; p < k; p += 2 {
				x0, w0 := daz(roundBF16(x[i*k+p])), daz(w[j*k+p])
				var x1, w1 float32
				if p+1 < k {
					x1, w1 = daz(roundBF16(x[i*k+p+1])), daz(w[j*k+p+1])
				}
				acc = flush(acc + x1*w1)
				acc = flush(acc + x0*w0)
			}
			if bias != nil {
				acc += bias[j]
			}
			out[i*n+j] = acc
		}
	}
	return out
}

// bf16DotImpls lists the kernel sets to run the dot layout with: the portable
// code always, the VDPBF16PS kernels where the CPU has them.
func bf16DotImpls() []impl {
	return implsFor(func(i impl) bool { return i == implAVX512 && hasBF16Dot })
}

// TestLinearDot checks the dot-product Linear, portable and SIMD, on one and
// two threads, with and without bias, bit for bit against refDot, and close
// to the exact product (the inputs are rounded to bfloat16).
func TestLinearDot(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(7, 8))
	alwaysParallel(t)
	for _, tc := range sampleShapes(linearShapes) {
		x := randVec(r, tc.m*tc.k)
		bias := randVec(r, tc.n)
		tm := testMats(r, tc.n, tc.k)[1]
		wb := toBF16(tm.vals)
		for _, b := range [][]float32{nil, bias} {
			want := refDot(x, wb, b, tc.m, tc.n, tc.k)
			exact := refLinear(x, tm.vals, b, tc.m, tc.n, tc.k)
			for _, im := range bf16DotImpls() {
				for _, threads := range []int{1, 2} {
					name := fmt.Sprintf("%v/%v/bias=%v/threads=%d", tc, im, b != nil, threads)
					useImpl(t, im)
					SetThreads(threads)
					w := tm.mk()
					if !w.PackBF16Dot() {
						t.Fatalf("%s: PackBF16Dot refused a bf16 matrix", name)
					}
					if !w.Packed() || !w.IsBF16() || w.Bytes() < int64(2*tc.n*tc.k) {
						t.Fatalf("%s: packed %v, bf16 %v, %d bytes", name, w.Packed(), w.IsBF16(), w.Bytes())
					}
					y := linearChecked(t, name, x, tc.m, w, b)
					for i, v := range y {
						if math.Float32bits(v) != math.Float32bits(want[i]) {
							t.Fatalf("%s: y[%d] = %v, want %v", name, i, v, want[i])
						}
						// Each input is off by at most 2⁻⁹ relative.
						var mag float64
						row, col := i/tc.n, i%tc.n
						for kk := range tc.k {
							mag += math.Abs(float64(x[row*tc.k+kk]) * float64(tm.vals[col*tc.k+kk]))
						}
						if math.Abs(float64(v)-exact[i]) > 0x1p-8*mag+1e-5 {
							t.Fatalf("%s: y[%d] = %v, exact %v", name, i, v, exact[i])
						}
					}
				}
			}
		}
	}
}

// TestLinearDotDenormals checks the flushing of denormal inputs, products
// and sums against the definition (and so the hardware against it).
func TestLinearDotDenormals(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const m, n, k = 3, 40, 30
	x := randVec(r, m*k)
	for i := range x {
		switch i % 4 {
		case 0:
			x[i] *= 1e-39 // denormal float32: bfloat16 denormal or zero
		case 1:
			x[i] *= 1e-20 // products underflow
		}
	}
	w := make([]uint16, n*k)
	for i := range w {
		v := float32(r.NormFloat64())
		if i%3 == 0 {
			v *= 1e-19
		}
		if i%7 == 0 {
			v *= 1e-39
		}
		w[i] = F32ToBF16(v)
	}
	want := refDot(x, w, nil, m, n, k)
	for _, im := range bf16DotImpls() {
		useImpl(t, im)
		mat := NewBF16(n, k, slices.Clone(w))
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

// TestPackBF16Dot checks the layout: rows read back exactly (Row, AddRow),
// LinearRows equals Linear, the reorder is in place when it can be, and only
// unpacked bf16 matrices are taken.
func TestPackBF16Dot(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, sh := range []struct{ n, k int }{{1, 1}, {5, 3}, {32, 8}, {64, 768}, {33, 17}, {96, 31}} {
		tm := testMats(r, sh.n, sh.k)[1]
		w := tm.mk()
		data := w.BF16
		if !w.PackBF16Dot() {
			t.Fatalf("%v: refused", sh)
		}
		if w.BF16 != nil {
			t.Fatalf("%v: BF16 still set", sh)
		}
		inPlace := &w.pdot[0] == &data[0]
		if want := sh.n%32 == 0 && sh.k%2 == 0; inPlace != want {
			t.Fatalf("%v: in place %v, want %v", sh, inPlace, want)
		}
		row := make([]float32, sh.k)
		for i := range sh.n {
			w.Row(i, row)
			if !slices.Equal(row, tm.vals[i*sh.k:(i+1)*sh.k]) {
				t.Fatalf("%v: row %d differs", sh, i)
			}
			acc := slices.Clone(row)
			w.AddRow(acc, i)
			for c := range acc {
				if acc[c] != 2*row[c] {
					t.Fatalf("%v: AddRow row %d col %d = %v", sh, i, c, acc[c])
				}
			}
		}
		const m = 3
		x := randVec(r, m*sh.k)
		full := make([]float32, m*sh.n)
		Linear(full, x, m, w, nil)
		rows := []int{sh.n - 1, 0, sh.n / 2}
		got := make([]float32, m*len(rows))
		LinearRows(got, x, m, w, rows)
		for i := range m {
			for j, rw := range rows {
				if got[i*len(rows)+j] != full[i*sh.n+rw] {
					t.Fatalf("%v: LinearRows[%d,%d] = %v, Linear %v", sh, i, rw, got[i*len(rows)+j], full[i*sh.n+rw])
				}
			}
		}
		if w.PackBF16Dot() {
			t.Fatalf("%v: packed twice", sh)
		}
	}
	// float32 weights are rounded to bfloat16.
	vals := []float32{1, 1.00390625, 3.0117188, -1e-3}
	f := NewF32(2, 2, slices.Clone(vals))
	if !f.PackBF16Dot() || !f.IsBF16() || f.F32 != nil || f.Bytes() != 32*2*2 {
		t.Fatalf("float32 matrix: packed %v, bf16 %v, %d bytes", f.Packed(), f.IsBF16(), f.Bytes())
	}
	for i := range 2 {
		row := f.Row(i, make([]float32, 2))
		for c, v := range row {
			if want := BF16ToF32(F32ToBF16(vals[i*2+c])); v != want {
				t.Fatalf("float32 matrix: [%d,%d] = %v, want %v", i, c, v, want)
			}
		}
	}
	b := NewBF16(32, 2, make([]uint16, 64))
	b.Pack()
	if simdGEMM() && b.PackBF16Dot() {
		t.Fatal("panel-packed matrix taken")
	}
}

// TestRoundBF16 checks the SIMD conversion of the dot-product inputs against
// roundBF16 on ties, denormals, infinities and NaNs, and roundBF16 against
// F32ToBF16 where they agree by definition (normal numbers).
func TestRoundBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	special := []uint32{0, 0x80000000, 1, 0x807fffff, 0x007fffff, 0x00800000, 0x3f808000, 0x3f818000,
		0x3f80ffff, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0x7fc00000, 0xffbfffff, 0x7fffffff}
	src := make([]float32, 0, 4*32+7)
	for _, b := range special {
		src = append(src, math.Float32frombits(b))
	}
	for len(src) < cap(src) {
		src = append(src, math.Float32frombits(r.Uint32()))
	}
	want := make([]uint16, len(src))
	for i, v := range src {
		want[i] = roundBF16(v)
		b := math.Float32bits(v)
		if b&0x7f800000 != 0 && b&0x7f800000 != 0x7f800000 && want[i] != F32ToBF16(v) {
			t.Fatalf("roundBF16(%08x) = %04x, F32ToBF16 %04x", b, want[i], F32ToBF16(v))
		}
	}
	for _, c := range []struct {
		in  uint32
		out uint16
	}{{0x007fffff, 0}, {0x807fffff, 0x8000}, {0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x7f800001, 0x7fc0}} {
		if got := roundBF16(math.Float32frombits(c.in)); got != c.out {
			t.Fatalf("roundBF16(%08x) = %04x, want %04x", c.in, got, c.out)
		}
	}
	for _, im := range bf16DotImpls() {
		useImpl(t, im)
		got := make([]uint16, len(src)+1)
		toBF16Rows(got, src, 1, len(src), len(src)+1, false)
		for i := range src {
			if got[i] != want[i] {
				t.Fatalf("%v: %08x → %04x, want %04x", im, math.Float32bits(src[i]), got[i], want[i])
			}
		}
		if got[len(src)] != 0 {
			t.Fatalf("%v: padding %04x", im, got[len(src)])
		}
	}
}
