package tensor

import (
	"math"
	"sync"
)

// The bfloat16 dot-product layout is an opt-in, lower-precision way to
// multiply by bfloat16 weights: Linear rounds its input rows to bfloat16
// (nearest even) and accumulates pairs of products with the AVX512_BF16
// instruction VDPBF16PS, twice the multiply-adds per instruction of float32
// FMA. Results differ from the float32 path by the rounding of the inputs
// (about 2⁻⁹ relative per element), so it is never used unless a caller
// packs a matrix with PackBF16Dot.
//
// Every output element is one chain over the pairs of k, in order, from
// zero — acc = (acc + x[2p+1]·w[2p+1]) + x[2p]·w[2p], each addition rounded
// to nearest even with denormal inputs and results flushed to zero, which is
// VDPBF16PS's definition (checked bit for bit against the hardware) — then
// + bias. As with the float32 path, the value does not depend on the batch,
// the other rows, the threads or the tiles, so batching stays exact within
// the mode.

// HasBF16Dot reports whether the bfloat16 dot-product kernels run here: the
// CPU has AVX-512 with AVX512_BF16 and the AVX-512 kernels are in use, or
// (arm64) the CPU has BFDOT and the NEON kernels are in use (see
// SetKernels). Without them a PackBF16Dot matrix is multiplied by portable
// code that computes the amd64 values much more slowly, so callers should
// only choose the layout when this is true. BFDOT rounds differently (see
// linear_arm64.go): on arm64 the Linear of the mode has its own values,
// within the same bound of the float32 product.
func HasBF16Dot() bool { return hasBF16Dot && (active == implAVX512 || active == implNEON) }

// PackBF16Dot moves a matrix into the layout of the dot-product kernels:
// panels of 32 rows, each stored as [⌈Cols/2⌉][32][2] (pairs of consecutive
// columns of one row side by side). float32 values are rounded to bfloat16
// (nearest even), halving their memory; Row then returns the rounded values.
// It reports false and leaves m unchanged if m is already packed or empty.
// Like Pack it reorders a bfloat16 matrix in place when Rows is a multiple
// of 32 and Cols is even, takes over the data slice, and must be called
// before m is shared.
func (m *Mat) PackBF16Dot() bool {
	if m.Packed() || m.Rows == 0 || m.Cols == 0 {
		return false
	}
	src := m.BF16
	if src == nil {
		src = make([]uint16, m.Rows*m.Cols)
		for i, v := range m.F32[:len(src)] {
			src[i] = F32ToBF16(v)
		}
	}
	m.pdot = packPanels(src, m.Rows, m.Cols, true)
	m.BF16, m.F32 = nil, nil
	return true
}

// dotK returns the padded row length (even) of the dot layout.
func dotK(k int) int { return k + k&1 }

// dotRow reads row i of a dot-packed matrix into dst, or adds it.
func (m *Mat) dotRow(i int, dst []float32, add bool) {
	if i < 0 || i >= m.Rows {
		panic("tensor: row index out of range")
	}
	kp := dotK(m.Cols)
	base := (i/panelCols)*panelCols*kp + 2*(i%panelCols)
	for c := range dst[:m.Cols] {
		v := BF16ToF32(m.pdot[base+(c>>1)*2*panelCols+c&1])
		if add {
			dst[c] += v
		} else {
			dst[c] = v
		}
	}
}

// bf16Scratch holds the bfloat16 copies of Linear inputs.
var bf16Scratch = sync.Pool{New: func() any { return new([]uint16) }}

// toBF16Rows rounds x [m, k] to bfloat16 rows of length kp (zero-padded)
// with roundBF16.
func toBF16Rows(dst []uint16, x []float32, m, k, kp int, serial bool) {
	if g := convGrain(k); m > g && !serial {
		For(m, g, func(lo, hi int) { toBF16RowRange(dst, x, k, kp, lo, hi) })
		return
	}
	toBF16RowRange(dst, x, k, kp, 0, m)
}

// toBF16RowRange is toBF16Rows for rows [lo, hi).
func toBF16RowRange(dst []uint16, x []float32, k, kp, lo, hi int) {
	for i := lo; i < hi; i++ {
		row := dst[i*kp : (i+1)*kp]
		RoundBF16(row[:k], x[i*k:(i+1)*k])
		clear(row[k:])
	}
}

// convGrain is the number of rows of k values converted per parallel run
// of the input conversions: large enough that only big batches (prompts,
// codec encodes) are split.
func convGrain(k int) int { return max(1, 1<<16/max(k, 1)) }

// RoundBF16 rounds src to bfloat16 into dst the way the dot products round
// their inputs: nearest even, NaN quieted, denormals to zero of the same
// sign (F32ToBF16 keeps denormals). Vectorised on AVX512_BF16.
func RoundBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	done := 0
	if active == implAVX512 {
		done = cvtBF16SIMD(dst, src)
	}
	for i := done; i < len(src); i++ {
		dst[i] = roundBF16(src[i])
	}
}

// roundBF16 is the rounding of the dot-product inputs (VCVTNE2PS2BF16's):
// nearest even, NaN quieted, denormals to zero of the same sign.
func roundBF16(f float32) uint16 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return uint16(b>>16) & 0x8000
	}
	return F32ToBF16(f)
}

// linearBF16Dot is Linear for a PackBF16Dot matrix.
func linearBF16Dot(y, x []float32, m int, w *Mat, bias []float32, serial bool) {
	k := w.Cols
	kp := dotK(k)
	sp := bf16Scratch.Get().(*[]uint16)
	if cap(*sp) < m*kp {
		*sp = make([]uint16, m*kp)
	}
	xb := (*sp)[:m*kp]
	toBF16Rows(xb, x, m, k, kp, serial)
	if !linearBF16DotSIMD(y, xb, m, w, bias, serial) {
		linearBF16DotGeneric(y, xb, m, w, bias, 0, w.panels())
	}
	bf16Scratch.Put(sp)
}

// bf16DAZ widens a bfloat16 value, denormals read as zero.
func bf16DAZ(v uint16) float32 {
	if v&0x7f80 == 0 {
		v &= 0x8000
	}
	return BF16ToF32(v)
}

// ftz flushes a denormal result to zero (sign kept).
func ftz(f float32) float32 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}

// linearBF16DotGeneric computes panels [p0, p1) of y from the bfloat16 rows xb
// [m, dotK(k)] with the kernels' order of operations.
func linearBF16DotGeneric(y []float32, xb []uint16, m int, w *Mat, bias []float32, p0, p1 int) {
	n := w.Rows
	kp := dotK(w.Cols)
	var acc [panelCols]float32
	for p := p0; p < p1; p++ {
		base := p * panelCols * kp
		nc := min(panelCols, n-p*panelCols)
		for i := range m {
			xr := xb[i*kp : (i+1)*kp]
			clear(acc[:])
			for q := 0; q < kp; q += 2 {
				x0, x1 := bf16DAZ(xr[q]), bf16DAZ(xr[q+1])
				wr := w.pdot[base+q*panelCols : base+(q+2)*panelCols]
				for j := range nc {
					a := ftz(acc[j] + x1*bf16DAZ(wr[2*j+1]))
					acc[j] = ftz(a + x0*bf16DAZ(wr[2*j]))
				}
			}
			storePanel(y[i*n+p*panelCols:i*n+p*panelCols+nc], acc[:], bias, p)
		}
	}
}
