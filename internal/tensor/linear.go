package tensor

import (
	"fmt"
	"math"
	"sync"
)

// Every output element y[i, j] of Linear is computed the same way whatever
// the batch: with packed weights, one FMA chain over k in order starting from
// zero, then + bias[j]; with row-major weights (portable code), Dot's fixed
// four-way split. Neither depends on the number of rows, on which rows share
// a call, on the thread count or on how columns are split, so a row computed
// alone equals the same row computed in a batch, bit for bit. Continuous
// batching and the voice prefix cache rely on it.

// Below parMinWork multiply-adds a Linear runs on the calling goroutine only:
// waking a helper costs a few microseconds. A decode step's one-row
// products are bound by reading their weights, which two threads do
// faster than one: at 2¹⁹ (a 2 MiB float32 matrix, about 50 µs on one
// core) the 768×768 projections and the 1024×768 audio heads of a
// one-stream step use both cores. Against 2²⁰, with steps alternated in
// one process (2026-12-02, docs/performance.md "Per-frame budget"), the
// language model's one-stream f32 step is 7–14 % faster. int8 products
// follow the same rule whatever their rows: against keeping those of
// fewer than 16 rows on one thread, a one-stream int8 frame (language
// model and codec decode, pipelined) is 1–13 % faster and 4 to 12
// streams' steps as fast or up to 9 % faster. Tests lower it to force
// the parallel path.
var parMinWork = 1 << 19

// genericParScale scales a portable Linear's multiply-adds for the
// parallel threshold: the portable loops do about a quarter of the SIMD
// kernels' work per second, and go parallel from parMinWork /
// genericParScale = 2¹⁸ multiply-adds, as tuned for them.
const genericParScale = 2

// genericMinChunk is the least work (multiply-adds) of one chunk of a
// parallel portable Linear: about 15 µs, well above the cost of taking it.
const genericMinChunk = 1 << 16

// Linear computes y[m, w.Rows] = x[m, w.Cols] · wᵀ + bias (bias may be nil).
// y must not overlap x. Pack w first: unpacked weights take the portable path.
func Linear(y, x []float32, m int, w *Mat, bias []float32) { linear(y, x, m, w, bias, false) }

// LinearSerial is Linear on the calling goroutine only (same results): for
// callers that already spread blocks of rows over the pool with For, so
// that each block's products run where its other work does.
func LinearSerial(y, x []float32, m int, w *Mat, bias []float32) { linear(y, x, m, w, bias, true) }

func linear(y, x []float32, m int, w *Mat, bias []float32, serial bool) {
	n, k := w.Rows, w.Cols
	if m < 0 || len(x) < m*k || len(y) < m*n || (bias != nil && len(bias) < n) {
		panic(fmt.Sprintf("tensor.Linear: x %d / y %d / bias %d too short for m=%d [%d %d]", len(x), len(y), len(bias), m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			if bias != nil {
				copy(y[i*n:(i+1)*n], bias[:n])
			} else {
				clear(y[i*n : (i+1)*n])
			}
		}
		return
	}
	if w.pdot != nil {
		linearBF16Dot(y, x, m, w, bias, serial)
		return
	}
	if w.pq != nil {
		linearInt8(y, x, m, w, bias, serial)
		return
	}
	if w.Packed() && linearSIMD(y, x, m, w, bias, serial) {
		return
	}
	if w.Packed() {
		linearPackedGeneric(y, x, m, w, bias, 0, w.panels())
		return
	}
	linearGeneric(y, x, m, w, bias, serial)
}

// LinearRows computes y[m, len(rows)] = x · w[rows]ᵀ: only the listed output
// rows of the weight (the two text logits of the frame decision, say). Each
// value equals what Linear computes for that output (without bias).
func LinearRows(y, x []float32, m int, w *Mat, rows []int) {
	k := w.Cols
	if m < 0 || len(x) < m*k || len(y) < m*len(rows) {
		panic(fmt.Sprintf("tensor.LinearRows: x %d / y %d too short for m=%d, %d rows of [%d %d]", len(x), len(y), m, len(rows), w.Rows, k))
	}
	for _, r := range rows {
		if r < 0 || r >= w.Rows {
			panic(fmt.Sprintf("tensor.LinearRows: row %d out of range [0, %d)", r, w.Rows))
		}
	}
	if w.Packed() {
		// One panel at a time through the same kernels as Linear, so the
		// values are Linear's bit for bit.
		var tmp [panelCols]float32
		sub := Mat{Rows: panelCols, Cols: k}
		for j, r := range rows {
			p := r / panelCols
			if w.pdot != nil {
				sub.pdot = w.pdot[p*panelCols*dotK(k) : (p+1)*panelCols*dotK(k)]
			} else if w.pq != nil {
				sub.pq = w.pq[p*i8PanelLen(k) : (p+1)*i8PanelLen(k)]
			} else if w.pb16 != nil {
				sub.pb16 = w.pb16[p*panelCols*k : (p+1)*panelCols*k]
			} else {
				sub.pf32 = w.pf32[p*panelCols*k : (p+1)*panelCols*k]
			}
			for i := range m {
				Linear(tmp[:], x[i*k:(i+1)*k], 1, &sub, nil)
				y[i*len(rows)+j] = tmp[r%panelCols]
			}
		}
		return
	}
	var buf []float32
	if w.BF16 != nil {
		var sb [1024]float32 // a model's hidden size: no allocation per call
		buf = sb[:]
		if k > len(sb) {
			buf = make([]float32, k)
		}
	}
	for j, r := range rows {
		var wr []float32
		if w.BF16 != nil {
			wr = w.Row(r, buf)
		} else {
			wr = w.F32[r*k : (r+1)*k]
		}
		for i := range m {
			y[i*len(rows)+j] = dotGeneric(x[i*k:(i+1)*k], wr)
		}
	}
}

// genericJob is a Linear on row-major weights by the portable code. A
// chunk is a run of output columns: like the SIMD kernels' panels, columns
// split over the pool without changing any value.
type genericJob struct {
	y, x  []float32
	m     int
	w     *Mat
	bias  []float32
	chunk int // columns per chunk
}

// linearGeneric computes y = x·wᵀ + bias from row-major weights, on the
// pool when the work is large enough (the threshold of the SIMD path).
func linearGeneric(y, x []float32, m int, w *Mat, bias []float32, serial bool) {
	j := genericJob{y: y, x: x, m: m, w: w, bias: bias}
	n := w.Rows
	threads := Threads()
	// The portable loops do about a quarter of the SIMD kernels' work per
	// second, so waking a helper pays off at less work (2¹⁸ multiply-adds):
	// the 768×768 projections and the audio heads of a decode step (M=1)
	// use both cores.
	if serial || threads == 1 || n < 2 || genericParScale*m*n*w.Cols < parMinWork {
		j.cols(0, n)
		return
	}
	// Up to eight chunks per thread of at least genericMinChunk
	// multiply-adds: finer than the SIMD path's two per thread, because a
	// helper that starts late (woken, or its core taken by another
	// process) then holds up the caller by one short chunk, not by a
	// quarter of the product. An even number of columns each, for the
	// two-row passes of cols.
	j.chunk = max((n+8*threads-1)/(8*threads), (genericMinChunk+m*w.Cols-1)/(m*w.Cols))
	j.chunk += j.chunk & 1
	// A parallel call's job goes to the helpers, so it lives on the heap:
	// reused, so that steady frames do not allocate one per product.
	pj := genericJobs.Get().(*genericJob)
	*pj = j
	parallel(pj, (n+j.chunk-1)/j.chunk, nil)
	*pj = genericJob{} // drop the references to the caller's slices
	genericJobs.Put(pj)
}

var genericJobs = sync.Pool{New: func() any { return new(genericJob) }}

func (j *genericJob) run(c int, _ *[]float32) {
	j.cols(c*j.chunk, min((c+1)*j.chunk, j.w.Rows))
}

// wideRows holds bfloat16 weight rows widened for the portable code.
var wideRows = sync.Pool{New: func() any { return new([]float32) }}

// cols computes output columns [c0, c1) of every row: each value is
// dotGeneric of the input row and the weight row, plus the bias (+0
// without one, as the value has always been computed).
func (j *genericJob) cols(c0, c1 int) {
	w, m := j.w, j.m
	n, k := w.Rows, w.Cols
	var wr0, wr1 []float32
	if w.BF16 != nil {
		buf := wideRows.Get().(*[]float32)
		defer wideRows.Put(buf)
		if len(*buf) < 2*k {
			*buf = make([]float32, 2*k)
		}
		wr0, wr1 = (*buf)[:k], (*buf)[k:2*k]
	}
	// Two weight rows against every input row: the rows stay in the first
	// level cache while the inputs stream past them, and each input load
	// serves two products (dot2Generic), which is what bounds the one-row
	// loop. The two rows are c and c+half, not c and c+1: each half of the
	// range is then read front to back as one stream, which the hardware
	// prefetchers follow; neighbouring rows (two pointers 4·k bytes apart,
	// then a jump) streamed from memory at 7.6 GB/s against 12.4 for the
	// one-row loop and 15.8 for this order (a decode step's 12 global
	// layers, one thread, Zen 5 VM).
	half := (c1 - c0) / 2
	for c := c0; c < c0+half; c++ {
		d := c + half
		if w.BF16 != nil {
			w.Row(c, wr0)
			w.Row(d, wr1)
		} else {
			wr0, wr1 = w.F32[c*k:(c+1)*k], w.F32[d*k:(d+1)*k]
		}
		var b0, b1 float32
		if j.bias != nil {
			b0, b1 = j.bias[c], j.bias[d]
		}
		for i := range m {
			v0, v1 := dot2Generic(j.x[i*k:(i+1)*k], wr0, wr1)
			j.y[i*n+c] = v0 + b0
			j.y[i*n+d] = v1 + b1
		}
	}
	if c := c0 + 2*half; c < c1 {
		if w.BF16 != nil {
			w.Row(c, wr0)
		} else {
			wr0 = w.F32[c*k : (c+1)*k]
		}
		var b float32
		if j.bias != nil {
			b = j.bias[c]
		}
		for i := range m {
			j.y[i*n+c] = dotGeneric(j.x[i*k:(i+1)*k], wr0) + b
		}
	}
}

// linearPackedGeneric computes panels [p0, p1) of y = x·wᵀ + bias from packed
// weights with the kernels' order: one fused multiply-add chain over k.
func linearPackedGeneric(y, x []float32, m int, w *Mat, bias []float32, p0, p1 int) {
	n, k := w.Rows, w.Cols
	var acc [panelCols]float32
	for p := p0; p < p1; p++ {
		base := p * panelCols * k
		nc := min(panelCols, n-p*panelCols)
		for i := range m {
			xr := x[i*k : (i+1)*k]
			clear(acc[:])
			for kk, xv := range xr {
				x64 := float64(xv)
				if w.pb16 != nil {
					wr := w.pb16[base+kk*panelCols : base+(kk+1)*panelCols]
					for j := range nc {
						acc[j] = float32(math.FMA(x64, float64(BF16ToF32(wr[j])), float64(acc[j])))
					}
				} else {
					wr := w.pf32[base+kk*panelCols : base+(kk+1)*panelCols]
					for j := range nc {
						acc[j] = float32(math.FMA(x64, float64(wr[j]), float64(acc[j])))
					}
				}
			}
			storePanel(y[i*n+p*panelCols:i*n+p*panelCols+nc], acc[:], bias, p)
		}
	}
}

// storePanel writes the accumulators of panel p into the output row yr,
// plus the panel's bias if there is one.
func storePanel(yr, acc, bias []float32, p int) {
	for j := range yr {
		if bias != nil {
			yr[j] = acc[j] + bias[p*panelCols+j]
		} else {
			yr[j] = acc[j]
		}
	}
}

// dotGeneric is the portable dot product and the definition of Linear's
// values on row-major weights: four partial sums, s_l over the indices
// ≡ l mod 4 of the whole groups of four, each product rounded to float32
// before it is added (the explicit conversions forbid the compiler to fuse
// them into FMAs, which it does on arm64 and on amd64 with GOAMD64=v3, so
// every architecture gets the same bits); the leftover indices (len%4) go
// into s0 in order; the result is (s0+s1)+(s2+s3).
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		av, bv := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += float32(av[0] * bv[0])
		s1 += float32(av[1] * bv[1])
		s2 += float32(av[2] * bv[2])
		s3 += float32(av[3] * bv[3])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dot2Generic returns dotGeneric(x, w0) and dotGeneric(x, w1), bit for bit
// (each output keeps its own four partial sums, its own tail and its own
// final (s0+s1)+(s2+s3)), loading each input value once for both rows: the
// one-row loop is bound by its loads (two per multiply-add), this one
// needs one and a half.
//
// The shape is for the Go compiler (gc 1.26, amd64): within one block it
// schedules every product before the sums that use them, which for the
// whole group of four would keep 8 partial sums, 8 products and an input
// live — more than the 15 usable vector registers, so partial sums would
// go through the stack every iteration (measured slower than the one-row
// loop). The re-slice of x for the upper two lanes is a bounds check the
// compiler keeps, so it splits the group into two blocks of four products
// each: no spill (check with go build -gcflags=-S). Measured on the
// Zen 5 VM, 64 rows × 768 in cache, best of 400: 4.7 vs 3.6 G multiply-
// adds/s for dotGeneric; three rows per pass spill again and are slower.
func dot2Generic(x, w0, w1 []float32) (float32, float32) {
	w0 = w0[:len(x)]
	w1 = w1[:len(x)]
	var a0, a1, a2, a3, b0, b1, b2, b3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		p, q := w0[i:i+4:i+4], w1[i:i+4:i+4]
		x0, x1 := x[i], x[i+1]
		a0 += float32(x0 * p[0])
		b0 += float32(x0 * q[0])
		a1 += float32(x1 * p[1])
		b1 += float32(x1 * q[1])
		xh := x[i+2 : i+4 : i+4]
		a2 += float32(xh[0] * p[2])
		b2 += float32(xh[0] * q[2])
		a3 += float32(xh[1] * p[3])
		b3 += float32(xh[1] * q[3])
	}
	for ; i < len(x); i++ {
		a0 += float32(x[i] * w0[i])
		b0 += float32(x[i] * w1[i])
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// gemmTile is one generated kernel: rows×cols outputs per call. The types
// of the kernel tables are declared on every build so that the functions
// that return them (i8SetFor) have one signature everywhere.
type gemmTile[T float32 | uint16 | int8] struct {
	rows, cols int
	fn         func(a *float32, lda int, w *T, wp int, k int, c *float32, ldc int, bias *float32)
}

// gemmSet indexes the tiles of one instruction set and weight type.
type gemmSet[T float32 | uint16 | int8] struct {
	maxRows int
	widths  []int                                                                                  // distinct tile widths, widest first
	byWidth [][]func(a *float32, lda int, w *T, wp int, k int, c *float32, ldc int, bias *float32) // [width][rows-1]
}
