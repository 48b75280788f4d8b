// Package tensor holds the float32 math of nanovox: weight matrices stored as
// float32 or bfloat16, and the handful of kernels the model forward passes are
// written in (Linear, LayerNorm, GELU, softmax, dot products).
//
// Every kernel has a portable pure-Go implementation. Activations are always
// float32; bfloat16 weights are widened exactly (a 16-bit shift) inside the
// kernels, so bf16 checkpoints stay bf16 in memory.
package tensor

import (
	"fmt"
	"math"
)

// Mat is a row-major weight matrix [Rows, Cols], such as a Linear layer's
// weight [out, in] or an embedding table [vocab, dim]. Exactly one of F32 and
// BF16 is set.
type Mat struct {
	Rows, Cols int
	F32        []float32
	BF16       []uint16
}

// NewF32 wraps float32 data of length rows*cols.
func NewF32(rows, cols int, data []float32) *Mat {
	if len(data) != rows*cols {
		panic(fmt.Sprintf("tensor.NewF32: %d values for [%d %d]", len(data), rows, cols))
	}
	return &Mat{Rows: rows, Cols: cols, F32: data}
}

// NewBF16 wraps bfloat16 bit patterns of length rows*cols.
func NewBF16(rows, cols int, data []uint16) *Mat {
	if len(data) != rows*cols {
		panic(fmt.Sprintf("tensor.NewBF16: %d values for [%d %d]", len(data), rows, cols))
	}
	return &Mat{Rows: rows, Cols: cols, BF16: data}
}

// IsBF16 reports whether the matrix is stored as bfloat16.
func (m *Mat) IsBF16() bool { return m.BF16 != nil }

// Bytes returns the storage size of the matrix.
func (m *Mat) Bytes() int64 {
	if m.BF16 != nil {
		return int64(len(m.BF16)) * 2
	}
	return int64(len(m.F32)) * 4
}

// Row writes row i as float32 into dst (len Cols) and returns dst.
func (m *Mat) Row(i int, dst []float32) []float32 {
	dst = dst[:m.Cols]
	if m.BF16 != nil {
		WidenBF16(dst, m.BF16[i*m.Cols:(i+1)*m.Cols])
		return dst
	}
	copy(dst, m.F32[i*m.Cols:(i+1)*m.Cols])
	return dst
}

// AddRow adds row i of m to dst (len Cols).
func (m *Mat) AddRow(dst []float32, i int) {
	if m.BF16 != nil {
		r := m.BF16[i*m.Cols : (i+1)*m.Cols]
		for k, v := range r {
			dst[k] += BF16ToF32(v)
		}
		return
	}
	r := m.F32[i*m.Cols : (i+1)*m.Cols]
	for k, v := range r {
		dst[k] += v
	}
}

// BF16ToF32 widens one bfloat16 value exactly.
func BF16ToF32(v uint16) float32 { return math.Float32frombits(uint32(v) << 16) }

// WidenBF16 widens src into dst exactly.
func WidenBF16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = math.Float32frombits(uint32(v) << 16)
	}
}

// F32ToBF16 rounds to the nearest bfloat16 (ties to even), NaN preserved.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// Linear computes y[m, w.Rows] = x[m, w.Cols] · wᵀ + bias (bias may be nil).
func Linear(y, x []float32, m int, w *Mat, bias []float32) {
	n, k := w.Rows, w.Cols
	if len(x) < m*k || len(y) < m*n {
		panic(fmt.Sprintf("tensor.Linear: x %d / y %d too short for m=%d [%d %d]", len(x), len(y), m, n, k))
	}
	linear(y, x, m, w, bias, 0, n)
}

// LinearRows computes y[m, len(rows)] = x · w[rows]ᵀ: only the listed output
// rows of the weight (the two text logits of the frame decision, say).
func LinearRows(y, x []float32, m int, w *Mat, rows []int) {
	k := w.Cols
	var buf []float32
	if w.BF16 != nil {
		buf = make([]float32, k)
	}
	for j, r := range rows {
		var wr []float32
		if w.BF16 != nil {
			wr = w.Row(r, buf)
		} else {
			wr = w.F32[r*k : (r+1)*k]
		}
		for i := 0; i < m; i++ {
			y[i*len(rows)+j] = Dot(x[i*k:(i+1)*k], wr)
		}
	}
}

// linear computes output columns [n0, n1) of y = x·wᵀ + bias.
func linear(y, x []float32, m int, w *Mat, bias []float32, n0, n1 int) {
	n, k := w.Rows, w.Cols
	var buf []float32
	if w.BF16 != nil {
		buf = make([]float32, k)
	}
	for j := n0; j < n1; j++ {
		var wr []float32
		if w.BF16 != nil {
			wr = w.Row(j, buf)
		} else {
			wr = w.F32[j*k : (j+1)*k]
		}
		var b float32
		if bias != nil {
			b = bias[j]
		}
		for i := 0; i < m; i++ {
			y[i*n+j] = Dot(x[i*k:(i+1)*k], wr) + b
		}
	}
}

// Dot returns the dot product of a and b[:len(a)].
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy computes y += a·x.
func Axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// Add computes y += x.
func Add(y, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += x[i]
	}
}

// Scale computes y *= a.
func Scale(y []float32, a float32) {
	for i := range y {
		y[i] *= a
	}
}

// LayerNorm normalises each of the m rows of x (width len(gamma)) into y:
// (x-mean)/sqrt(var+eps)·gamma + beta, with the biased variance. y may alias x.
func LayerNorm(y, x []float32, m int, gamma, beta []float32, eps float32) {
	d := len(gamma)
	for i := 0; i < m; i++ {
		xr := x[i*d : (i+1)*d]
		yr := y[i*d : (i+1)*d]
		var mean float64
		for _, v := range xr {
			mean += float64(v)
		}
		mean /= float64(d)
		var vs float64
		for _, v := range xr {
			dv := float64(v) - mean
			vs += dv * dv
		}
		inv := 1 / math.Sqrt(vs/float64(d)+float64(eps))
		for k, v := range xr {
			nv := float32((float64(v) - mean) * inv)
			if beta != nil {
				yr[k] = nv*gamma[k] + beta[k]
			} else {
				yr[k] = nv * gamma[k]
			}
		}
	}
}

// GELUTanh applies the tanh approximation of GELU ("gelu_new") in place:
// 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))).
func GELUTanh(x []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	for i, v := range x {
		f := float64(v)
		x[i] = float32(0.5 * f * (1 + math.Tanh(c*(f+0.044715*f*f*f))))
	}
}

// GELUErf applies the exact GELU in place: 0.5·x·(1+erf(x/√2)).
func GELUErf(x []float32) {
	for i, v := range x {
		f := float64(v)
		x[i] = float32(0.5 * f * (1 + math.Erf(f/math.Sqrt2)))
	}
}

// Softmax replaces x with softmax(x), computed stably.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		if v > mx {
			mx = v
		}
	}
	var s float64
	for i, v := range x {
		e := math.Exp(float64(v - mx))
		x[i] = float32(e)
		s += e
	}
	inv := float32(1 / s)
	for i := range x {
		x[i] *= inv
	}
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
