package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refQuant is the definition of the int8 quantization of one row, written
// independently of the package's code.
func refQuant(v []float32) ([]int32, float32) {
	q := make([]int32, len(v))
	var amax float32
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return q, float32(math.NaN())
		}
		amax = max(amax, float32(math.Abs(float64(x))))
	}
	if amax < 0x1p-100 {
		return q, 0
	}
	inv := 127 / amax
	for i, x := range v {
		p := x * inv
		q[i] = int32(math.RoundToEven(float64(p)))
	}
	return q, amax / 127
}

// refInt8 is the definition of the int8 Linear from row-major weights.
func refInt8(x, w, bias []float32, m, n, k int) []float32 {
	out := make([]float32, m*n)
	qw := make([][]int32, n)
	sw := make([]float32, n)
	for j := range n {
		qw[j], sw[j] = refQuant(w[j*k : (j+1)*k])
	}
	for i := range m {
		qx, sx := refQuant(x[i*k : (i+1)*k])
		for j := range n {
			var acc int32
			for kk := range k {
				acc += qx[kk] * qw[j][kk]
			}
			t := float32(acc) * sw[j]
			v := float32(t * sx)
			if bias != nil {
				v += bias[j]
			}
			out[i*n+j] = v
		}
	}
	return out
}

// i8Impls lists the kernel sets to run the int8 layout with: the portable
// code always, each set of VPDPBUSD kernels the CPU runs.
func i8Impls() []impl {
	return implsFor(func(i impl) bool { return i8SetFor(i) != nil })
}

// TestLinearInt8 checks the int8 Linear, portable and SIMD, on one and two
// threads, with and without bias, float32 and bfloat16 weights, bit for bit
// against refInt8, and within the quantization error of the exact product.
func TestLinearInt8(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(11, 12))
	alwaysParallel(t)
	for _, tc := range sampleShapes(linearShapes) {
		x := randVec(r, tc.m*tc.k)
		bias := randVec(r, tc.n)
		for _, tm := range testMats(r, tc.n, tc.k) {
			for _, b := range [][]float32{nil, bias} {
				want := refInt8(x, tm.vals, b, tc.m, tc.n, tc.k)
				exact := refLinear(x, tm.vals, b, tc.m, tc.n, tc.k)
				for _, im := range i8Impls() {
					for _, threads := range []int{1, 2} {
						name := fmt.Sprintf("%v/%s/%v/bias=%v/threads=%d", tc, tm.name, im, b != nil, threads)
						useImpl(t, im)
						SetThreads(threads)
						w := tm.mk()
						if !w.PackInt8() {
							t.Fatalf("%s: PackInt8 refused", name)
						}
						if !w.Packed() || w.IsBF16() || w.Bytes() != int64((tc.n+31)/32*32*4*((tc.k+3)/4+2)) {
							t.Fatalf("%s: packed %v, bf16 %v, %d bytes", name, w.Packed(), w.IsBF16(), w.Bytes())
						}
						y := linearChecked(t, name, x, tc.m, w, b)
						for i, v := range y {
							if math.Float32bits(v) != math.Float32bits(want[i]) {
								t.Fatalf("%s: y[%d] = %v, want %v", name, i, v, want[i])
							}
							// Each quantized value is off by at most half a
							// step, amax/254, of its row.
							row, col := i/tc.n, i%tc.n
							var xm, wm, mag float64
							for kk := range tc.k {
								xm = max(xm, math.Abs(float64(x[row*tc.k+kk])))
								wm = max(wm, math.Abs(float64(tm.vals[col*tc.k+kk])))
							}
							for kk := range tc.k {
								mag += (math.Abs(float64(x[row*tc.k+kk]))*wm + math.Abs(float64(tm.vals[col*tc.k+kk]))*xm) / 254
							}
							if math.Abs(float64(v)-exact[i]) > 1.01*mag+float64(tc.k)*xm*wm/254/254+1e-5 {
								t.Fatalf("%s: y[%d] = %v, exact %v (bound %v)", name, i, v, exact[i], mag)
							}
						}
						// LinearRows reads the same values.
						rows := []int{tc.n - 1, 0, tc.n / 2}
						yr := make([]float32, tc.m*len(rows))
						LinearRows(yr, x, tc.m, w, rows)
						for i := range tc.m {
							for jj, c := range rows {
								got, exp := yr[i*len(rows)+jj], want[i*tc.n+c]
								if b != nil {
									exp = refInt8(x[i*tc.k:(i+1)*tc.k], tm.vals, nil, 1, tc.n, tc.k)[c]
								}
								if math.Float32bits(got) != math.Float32bits(exp) {
									t.Fatalf("%s: LinearRows row %d col %d = %v, want %v", name, i, c, got, exp)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestInt8Rows checks Row and AddRow on an int8 matrix: the dequantized
// values q·scale of every row.
func TestInt8Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, sh := range [][2]int{{1, 1}, {33, 7}, {64, 768}, {70, 30}} {
		n, k := sh[0], sh[1]
		for _, tm := range testMats(r, n, k) {
			w := tm.mk()
			w.PackInt8()
			got := make([]float32, k)
			for i := range n {
				q, s := refQuant(tm.vals[i*k : (i+1)*k])
				w.Row(i, got)
				for c := range k {
					if want := float32(q[c]) * s; got[c] != want {
						t.Fatalf("%dx%d %s row %d col %d: %v, want %v", n, k, tm.name, i, c, got[c], want)
					}
				}
				acc := make([]float32, k)
				for c := range acc {
					acc[c] = 1
				}
				w.AddRow(acc, i)
				for c := range k {
					if want := 1 + float32(float32(q[c])*s); acc[c] != want { // rounded product: no fused multiply-add on arm64
						t.Fatalf("%dx%d %s AddRow row %d col %d: %v, want %v", n, k, tm.name, i, c, acc[c], want)
					}
				}
			}
		}
	}
	var w Mat
	if w.PackInt8() {
		t.Fatal("PackInt8 packed an empty matrix")
	}
	m := NewF32(2, 2, []float32{1, 2, 3, 4})
	m.PackBF16Dot()
	if m.PackInt8() {
		t.Fatal("PackInt8 packed a packed matrix")
	}
	if long := NewBF16(1, maxInt8Cols+1, make([]uint16, maxInt8Cols+1)); long.PackInt8() || long.Packed() {
		t.Fatal("PackInt8 packed rows long enough to overflow its sums")
	}
}

// TestLinearInt8Special checks rows the quantization treats apart: all
// zeros and tiny (outputs = bias), an infinity or a NaN in the vector part
// or the tail (NaN outputs), and extreme magnitudes, on every
// implementation against the definition.
func TestLinearInt8Special(t *testing.T) {
	const n, k = 40, 70
	r := rand.New(rand.NewPCG(15, 16))
	wv := randVec(r, n*k)
	for c := range k { // a zero weight row and a tiny one
		wv[3*k+c] = 0
		wv[5*k+c] *= 1e-35
	}
	bias := randVec(r, n)
	rows := [][]float32{
		make([]float32, k),
		randVec(r, k),
		randVec(r, k),
		randVec(r, k),
		randVec(r, k),
		randVec(r, k),
		randVec(r, k),
		randVec(r, k),
	}
	for c := range k {
		rows[1][c] *= 1e-32 // below 2⁻¹⁰⁰: zero
		rows[4][c] *= 3e36  // near the float32 limit
		rows[5][c] *= 1e-29 // just above the limit
	}
	rows[2][5] = float32(math.Inf(-1))
	rows[3][k-1] = float32(math.NaN())
	rows[6][20] = float32(math.NaN())
	rows[7][k-2] = float32(math.Inf(1))
	var x []float32
	for _, row := range rows {
		x = append(x, row...)
	}
	m := len(rows)
	want := refInt8(x, wv, bias, m, n, k)
	for _, im := range i8Impls() {
		useImpl(t, im)
		w := NewF32(n, k, append([]float32(nil), wv...))
		w.PackInt8()
		y := make([]float32, m*n)
		Linear(y, x, m, w, bias)
		for i, v := range y {
			if math.Float32bits(v) != math.Float32bits(want[i]) && !(v != v && want[i] != want[i]) {
				t.Fatalf("%v: y[%d] (row %d) = %v, want %v", im, i, i/n, v, want[i])
			}
			row := i / n
			switch {
			case row <= 1 && v != bias[i%n]:
				t.Fatalf("%v: zero row %d gives %v, want the bias %v", im, row, v, bias[i%n])
			case (row == 2 || row == 3 || row >= 6) && v == v:
				t.Fatalf("%v: non-finite row %d gives %v, want NaN", im, row, v)
			case (row == 4 || row == 5) && (v != v || math.IsInf(float64(v), 0)):
				t.Fatalf("%v: row %d gives %v", im, row, v)
			}
		}
	}
}

// TestSetKernels: a known set the CPU runs is taken (and the product modes
// follow it), anything else is refused and changes nothing.
func TestSetKernels(t *testing.T) {
	old := active
	t.Cleanup(func() { active = old })
	if err := SetKernels("sse9"); err == nil || active != old {
		t.Fatalf("SetKernels(sse9): %v, active %v", err, active)
	}
	if err := SetKernels("generic"); err != nil || Kernels() != "generic" || HasBF16Dot() || HasInt8Dot() {
		t.Fatalf("SetKernels(generic): %v, kernels %s, bf16 %v, int8 %v", err, Kernels(), HasBF16Dot(), HasInt8Dot())
	}
	for _, i := range allImpls[1:] {
		err := SetKernels(i.String())
		if implAvailable(i) != (err == nil) {
			t.Fatalf("SetKernels(%v): %v, available %v", i, err, implAvailable(i))
		}
		if err == nil && (Kernels() != i.String() || HasBF16Dot() && i != implAVX512 && i != implNEON || HasInt8Dot() != (i8SetFor(i) != nil)) {
			t.Fatalf("SetKernels(%v): kernels %s, bf16 %v, int8 %v", i, Kernels(), HasBF16Dot(), HasInt8Dot())
		}
	}
}

// TestQuantizeI8 checks QuantizeI8 on every implementation against the
// definition (refQuant), including the rows that quantize to zeros.
func TestQuantizeI8(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	var rows [][]float32
	for _, n := range []int{1, 7, 15, 16, 17, 31, 32, 33, 64, 100} {
		v := randVec(r, n)
		for i := range v {
			v[i] *= 3
		}
		rows = append(rows, v)
	}
	half := make([]float32, 64) // exact .5 steps: round half to even
	for i := range half {
		half[i] = float32(i%9) - 4.5
	}
	half[0] = 127
	inf := randVec(r, 40)
	inf[33] = float32(math.Inf(-1))
	nan := randVec(r, 40)
	nan[3] = float32(math.NaN())
	rows = append(rows, half, inf, nan, make([]float32, 20), []float32{0x1p-101, -0x1p-102}, []float32{-1e30, 1e-30, 5e29})
	for _, im := range impls() {
		useImpl(t, im)
		for i, v := range rows {
			q := make([]int8, len(v)+1)
			q[len(v)] = 99 // guard
			for j := range v {
				q[j] = 55 // must be overwritten, zeros included
			}
			s := QuantizeI8(q[:len(v)], v)
			wq, ws := refQuant(v)
			if math.Float32bits(s) != math.Float32bits(ws) && !(math.IsNaN(float64(s)) && math.IsNaN(float64(ws))) {
				t.Fatalf("%v row %d: scale %v, want %v", im, i, s, ws)
			}
			for j := range v {
				if int32(q[j]) != wq[j] {
					t.Fatalf("%v row %d: q[%d] = %d, want %d (v %v)", im, i, j, q[j], wq[j], v[j])
				}
			}
			if q[len(v)] != 99 {
				t.Fatalf("%v row %d: wrote past the row", im, i)
			}
		}
	}
}
