package tensor

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
)

// The int8 layout is the second opt-in, lower-precision way to multiply
// (W8A8, the scheme of ONNX Runtime's dynamic quantization): every output
// row of the weight is quantized once at load to signed bytes with its own
// scale (symmetric, ±127), and Linear quantizes each input row the same way
// when it is called. The products are summed exactly in int32 (VPDPBUSD on
// AVX512_VNNI or AVX-VNNI, four byte products per lane and instruction:
// twice the multiply-adds of the bfloat16 dot products, and a quarter of the
// bytes of float32 weights), then scaled back:
//
//	y[i,j] = float32(float32(float32(Σₖ qx[i,k]·qw[j,k]) · sw[j]) · sx[i]) + bias[j]
//
// with each product of the formula rounded to float32. A row is quantized
// as q = round-half-even(v · (127/amax)), scale amax/127 (both float32),
// where amax is the row's largest magnitude; a row whose amax is below
// 2⁻¹⁰⁰ quantizes to zeros with scale 0, and a row holding an infinity or a
// NaN to zeros with a NaN scale (so its outputs are NaN). The integer sum
// does not depend on the order of the products, so, as everywhere in the
// package, an output does not depend on the batch, the other rows, the
// threads or the tiles. The error is that of 8-bit inputs: about 0.4 % of
// the row's largest magnitude per element.

// HasInt8Dot reports whether int8 kernels run here with the kernel set in
// use: AVX-512 with AVX512_VNNI, or AVX2 with AVX-VNNI (Intel client cores
// since Alder Lake). Without them a PackInt8 matrix is multiplied by
// portable code that computes the same values much more slowly.
func HasInt8Dot() bool { return i8SetFor(active) != nil }

// quantMin is the smallest row magnitude that is quantized (127/quantMin
// stays finite); smaller rows quantize to zero.
const quantMin = 0x1p-100

// maxInt8Cols bounds the row length of an int8 matrix: the int32 sums of
// up to 255·127 per product cannot overflow below it.
const maxInt8Cols = 1 << 16

// quantStep is the number of k values in one group of the int8 layout.
const quantStep = 4

// i8K returns the number of 4-byte groups of a row of k values.
func i8K(k int) int { return (k + quantStep - 1) / quantStep }

// i8PanelLen is the size in bytes of one panel of the int8 layout: the
// groups, then the trailer (corrections and scales, 32 lanes of 4 bytes
// each).
func i8PanelLen(k int) int { return (i8K(k) + 2) * quantStep * panelCols }

// rowScale returns the quantization of a row: the factor inv that maps it
// to ±127 and its scale; ok is false for the rows that quantize to zeros
// (scale 0 for tiny rows, NaN for rows with an infinity or a NaN).
func rowScale(v []float32) (inv, scale float32, ok bool) {
	bits := absMaxBits(v)
	if bits >= 0x7f800000 {
		return 0, float32(math.NaN()), false
	}
	amax := math.Float32frombits(bits)
	if amax < quantMin {
		return 0, 0, false
	}
	return 127 / amax, amax / 127, true
}

// absMaxBits returns the largest bit pattern of |v[i]|: NaN above infinity
// above every finite magnitude, which are ordered like their bits.
func absMaxBits(v []float32) uint32 {
	m, i := absMaxSIMD(v)
	for _, x := range v[i:] {
		m = max(m, math.Float32bits(x)&0x7fffffff)
	}
	return m
}

// QuantizeI8 writes v quantized to signed bytes into q, as Linear
// quantizes its rows, and returns the scale: q[i] =
// round-half-even(v[i]·(127/amax)), scale amax/127 (amax the largest
// magnitude); a row below 2⁻¹⁰⁰ gives zeros and scale 0, a row with an
// infinity or a NaN zeros and a NaN scale. q·scale approximates v within
// half a step, 0.4 % of amax.
func QuantizeI8(q []int8, v []float32) float32 {
	q = q[:len(v)]
	inv, scale, ok := rowScale(v)
	if !ok {
		clear(q)
		return scale
	}
	n := quantSIMD(q, v, inv) // offset by 128: flip the sign bits back
	i := 0
	for ; i+8 <= n; i += 8 {
		w := (*uint64)(unsafe.Pointer(&q[i]))
		*w ^= 0x8080808080808080
	}
	for ; i < n; i++ {
		q[i] ^= -128
	}
	for i := n; i < len(v); i++ {
		q[i] = int8(math.RoundToEven(float64(v[i] * inv)))
	}
	return scale
}

// quantizeU8 writes v quantized and offset by 128 (unsigned bytes read as
// int8 storage) into q and returns the scale.
func quantizeU8(q []int8, v []float32) float32 {
	q = q[:len(v)]
	inv, scale, ok := rowScale(v)
	if !ok {
		for i := range q {
			q[i] = -128
		}
		return scale
	}
	for i := quantSIMD(q, v, inv); i < len(v); i++ {
		q[i] = int8(math.RoundToEven(float64(v[i]*inv))) ^ -128
	}
	return scale
}

// PackInt8 quantizes the matrix (each row with its own scale) into the int8
// layout: panels of 32 rows, each stored as [⌈Cols/4⌉][32][4] signed bytes
// followed by the rows' corrections and scales. Row then returns the
// dequantized values q·scale. It reports false and leaves m unchanged if m
// is already packed, empty, or has rows longer than 65536 (whose integer
// sums could overflow). The float32 or bfloat16 data is released; call it
// before m is shared.
func (m *Mat) PackInt8() bool {
	if m.Packed() || m.Rows == 0 || m.Cols == 0 || m.Cols > maxInt8Cols {
		return false
	}
	k := m.Cols
	kq := i8K(k)
	np := m.panels()
	plen := i8PanelLen(k)
	dst := make([]int8, np*plen)
	// Panels are independent: quantized in parallel (a big model's load).
	For(np, 1, func(p0, p1 int) {
		row := make([]float32, k)
		q := make([]int8, k)
		for r := p0 * panelCols; r < min(p1*panelCols, m.Rows); r++ {
			m.Row(r, row)
			sw := QuantizeI8(q, row)
			p, lane := r/panelCols, r%panelCols
			out := dst[p*plen : (p+1)*plen]
			var sum int32
			for c, v := range q {
				out[(c/quantStep)*quantStep*panelCols+lane*quantStep+c%quantStep] = v
				sum += int32(v)
			}
			trailer := unsafe.Slice((*byte)(unsafe.Pointer(&out[kq*quantStep*panelCols])), 2*quantStep*panelCols)
			binary.LittleEndian.PutUint32(trailer[lane*4:], uint32(128*sum))
			binary.LittleEndian.PutUint32(trailer[(panelCols+lane)*4:], math.Float32bits(sw))
		}
	})
	m.pq = dst
	m.F32, m.BF16 = nil, nil
	return true
}

// i8Trailer returns the correction and scale of row i of an int8 matrix.
func (m *Mat) i8Trailer(i int) (corr int32, sw float32) {
	kq := i8K(m.Cols)
	plen := i8PanelLen(m.Cols)
	base := (i/panelCols)*plen + kq*quantStep*panelCols + (i%panelCols)*4
	t := unsafe.Slice((*byte)(unsafe.Pointer(&m.pq[base])), (panelCols+1)*4)
	return int32(binary.LittleEndian.Uint32(t)), math.Float32frombits(binary.LittleEndian.Uint32(t[panelCols*4:]))
}

// i8Row reads row i of an int8 matrix (dequantized) into dst, or adds it.
func (m *Mat) i8Row(i int, dst []float32, add bool) {
	if i < 0 || i >= m.Rows {
		panic("tensor: row index out of range")
	}
	_, sw := m.i8Trailer(i)
	base := (i/panelCols)*i8PanelLen(m.Cols) + (i%panelCols)*quantStep
	for c := range dst[:m.Cols] {
		// float32(…) rounds the product: without it the compiler may fuse
		// it into dst[c] += v on arm64 (and amd64 v3), changing the sum.
		v := float32(float32(m.pq[base+(c/quantStep)*quantStep*panelCols+c%quantStep]) * sw)
		if add {
			dst[c] += v
		} else {
			dst[c] = v
		}
	}
}

// i8Scratch holds the quantized Linear inputs.
var i8Scratch = sync.Pool{New: func() any { return new([]uint32) }}

// quantizeRows quantizes x [m, k] into rows of kq+1 words: kq words of four
// bytes q+128 (padding 128, i.e. zero), then the row's scale as float32 bits.
func quantizeRows(dst []uint32, x []float32, m, k int, serial bool) {
	if g := convGrain(k); m > g && !serial {
		For(m, g, func(lo, hi int) { quantizeRowRange(dst, x, k, lo, hi) })
		return
	}
	quantizeRowRange(dst, x, k, 0, m)
}

// quantizeRowRange is quantizeRows for rows [lo, hi).
func quantizeRowRange(dst []uint32, x []float32, k, lo, hi int) {
	kq := i8K(k)
	for i := lo; i < hi; i++ {
		row := dst[i*(kq+1) : (i+1)*(kq+1)]
		b := unsafe.Slice((*int8)(unsafe.Pointer(&row[0])), kq*quantStep)
		sx := quantizeU8(b[:k], x[i*k:(i+1)*k])
		for c := k; c < len(b); c++ {
			b[c] = -128 // 128: zero
		}
		row[kq] = math.Float32bits(sx)
	}
}

// linearInt8 is Linear for an int8 matrix.
func linearInt8(y, x []float32, m int, w *Mat, bias []float32, serial bool) {
	kq := i8K(w.Cols)
	sp := i8Scratch.Get().(*[]uint32)
	if cap(*sp) < m*(kq+1) {
		*sp = make([]uint32, m*(kq+1))
	}
	xq := (*sp)[:m*(kq+1)]
	quantizeRows(xq, x, m, w.Cols, serial)
	if !linearInt8SIMD(y, xq, m, w, bias, serial) {
		linearInt8Generic(y, xq, m, w, bias, 0, w.panels())
	}
	i8Scratch.Put(sp)
}

// linearInt8Generic computes panels [p0, p1) of y from the quantized rows xq
// with the kernels' arithmetic.
func linearInt8Generic(y []float32, xq []uint32, m int, w *Mat, bias []float32, p0, p1 int) {
	n := w.Rows
	kq := i8K(w.Cols)
	plen := i8PanelLen(w.Cols)
	var acc [panelCols]int32
	var out [panelCols]float32
	for p := p0; p < p1; p++ {
		pan := w.pq[p*plen : (p+1)*plen]
		nc := min(panelCols, n-p*panelCols)
		for i := range m {
			row := xq[i*(kq+1) : (i+1)*(kq+1)]
			xb := unsafe.Slice((*uint8)(unsafe.Pointer(&row[0])), kq*quantStep)
			clear(acc[:])
			for g := range kq {
				grp := pan[g*quantStep*panelCols : (g+1)*quantStep*panelCols]
				for j := range nc {
					s := acc[j]
					for t := range quantStep {
						s += int32(xb[g*quantStep+t]) * int32(grp[j*quantStep+t])
					}
					acc[j] = s
				}
			}
			sx := math.Float32frombits(row[kq])
			for j := range nc {
				corr, sw := w.i8Trailer(p*panelCols + j)
				t := float32(float32(acc[j]-corr) * sw)
				out[j] = float32(t * sx)
			}
			storePanel(y[i*n+p*panelCols:i*n+p*panelCols+nc], out[:], bias, p)
		}
	}
}
