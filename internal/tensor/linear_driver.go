//go:build (amd64 || arm64) && gc && !purego

package tensor

import (
	"sync"
	"unsafe"
)

// The driver of the SIMD Linear kernels, shared by every architecture that
// has them (the tiles themselves are generated per architecture: see
// kernels_amd64.s and kernels_arm64.s): a Linear on packed weights is cut
// into ranges of panels for the pool, each range swept in groups of panels
// for all blocks of rows, with the tallest tile that fits, and the last,
// partial panel computed through a buffer so nothing is written past the
// output's columns.
// simdGEMM reports whether Linear has SIMD kernels for packed weights.
func simdGEMM() bool { return active != implGeneric }

func newGemmSet[T float32 | uint16 | int8](tiles []gemmTile[T]) *gemmSet[T] {
	s := &gemmSet[T]{}
	for _, t := range tiles {
		s.maxRows = max(s.maxRows, t.rows)
		wi := -1
		for i, w := range s.widths {
			if w == t.cols {
				wi = i
			}
		}
		if wi < 0 {
			// Insert keeping widths in decreasing order.
			wi = 0
			for wi < len(s.widths) && s.widths[wi] > t.cols {
				wi++
			}
			s.widths = append(s.widths[:wi], append([]int{t.cols}, s.widths[wi:]...)...)
			s.byWidth = append(s.byWidth[:wi], append([][]func(*float32, int, *T, int, int, *float32, int, *float32){nil}, s.byWidth[wi:]...)...)
		}
		for len(s.byWidth[wi]) < t.rows {
			s.byWidth[wi] = append(s.byWidth[wi], nil)
		}
		s.byWidth[wi][t.rows-1] = t.fn
	}
	return s
}

// linearJob is one Linear call on packed weights, cut into panel ranges.
type linearJob[T float32 | uint16 | int8] struct {
	set  *gemmSet[T]
	y, x []float32
	m    int
	wd   []T
	n    int
	bias []float32

	// Layout: row stride of x and loop count of the kernels (k, or the
	// number of pairs for the dot kernels), elements per weight panel and
	// per column within a panel row.
	lda, kIter, panelLen, colStep int

	np    int // panels
	chunk int // panels per parallel chunk

	serial bool // run on the calling goroutine only (LinearSerial)
}

// plain sets the layout of the float32-activation kernels.
func (j *linearJob[T]) plain(k int) {
	j.lda, j.kIter, j.panelLen, j.colStep = k, k, panelCols*k, 1
}

// run1 runs the job, on the pool if it is large enough.
func (j *linearJob[T]) run1() {
	np := (j.n + panelCols - 1) / panelCols
	j.np = np
	threads := Threads()
	if j.serial || threads == 1 || np < 2 || j.m*j.n*j.kIter*j.colStep < parMinWork {
		j.panels(0, np)
		return
	}
	j.chunk = max(1, (np+2*threads-1)/(2*threads))
	pj := new(linearJob[T]) // only a parallel call's job lives on the heap
	*pj = *j
	parallel(pj, (np+pj.chunk-1)/pj.chunk, nil)
}

func (j *linearJob[T]) run(c int, _ *[]float32) {
	j.panels(c*j.chunk, min((c+1)*j.chunk, j.np))
}

// panelGroup is how many panels are swept together for all row blocks: the
// widest tile, small enough to stay in L2 for every row block.
const panelGroup = 4

// panels computes the output columns of panels [p0, p1) for all rows.
func (j *linearJob[T]) panels(p0, p1 int) {
	n, m := j.n, j.m
	full := p1 // panels [p0, full) lie wholly inside n
	if p1*panelCols > n {
		full = p1 - 1
	}
	nb := (m + j.set.maxRows - 1) / j.set.maxRows
	for g := p0; g < p1; g += panelGroup {
		ge := min(g+panelGroup, p1)
		fe := min(ge, full)
		for b := range nb {
			i0, i1 := b*m/nb, (b+1)*m/nb
			if fe > g {
				var bias []float32
				if j.bias != nil {
					bias = j.bias[g*panelCols:]
				}
				j.tiles(i0, i1, g*panelCols, fe*panelCols, j.y[i0*n+g*panelCols:], n, bias)
			}
			if fe < ge {
				j.paddedPanel(i0, i1, fe)
			}
		}
	}
}

// tiles computes columns [c0, c1) of rows [i0, i1) into c (row stride ldc,
// column c0 at c[0]); bias, if set, is indexed like c (column c0 at bias[0]).
func (j *linearJob[T]) tiles(i0, i1, c0, c1 int, c []float32, ldc int, bias []float32) {
	r := i1 - i0
	a := &j.x[i0*j.lda]
	for col := c0; col < c1; {
		var fn func(*float32, int, *T, int, int, *float32, int, *float32)
		width := 0
		for wi, w := range j.set.widths {
			if w <= c1-col && r <= len(j.set.byWidth[wi]) && j.set.byWidth[wi][r-1] != nil {
				fn, width = j.set.byWidth[wi][r-1], w
				break
			}
		}
		var bp *float32
		if bias != nil {
			bp = &bias[col-c0]
		}
		fn(a, j.lda, &j.wd[(col/panelCols)*j.panelLen+(col%panelCols)*j.colStep], j.panelLen, j.kIter, &c[col-c0], ldc, bp)
		col += width
	}
}

// paddedPanel computes the last, partial panel p through a buffer, so that
// nothing is written past the row's n columns.
func (j *linearJob[T]) paddedPanel(i0, i1, p int) {
	// The buffer goes to the kernels through a function value, so it would
	// escape: it comes from a pool instead of the stack.
	pad := padPool.Get().(*padBuf)
	defer padPool.Put(pad)
	tmp, bt := &pad.out, &pad.bias
	c0 := p * panelCols
	nc := j.n - c0
	var bias []float32
	if j.bias != nil {
		copy(bt[:], j.bias[c0:j.n])
		clear(bt[nc:]) // the padding columns, computed and dropped
		bias = bt[:]
	}
	for r0 := i0; r0 < i1; r0 += 8 {
		r1 := min(r0+8, i1)
		j.tiles(r0, r1, c0, c0+panelCols, tmp[:], panelCols, bias)
		for i := r0; i < r1; i++ {
			copy(j.y[i*j.n+c0:i*j.n+j.n], tmp[(i-r0)*panelCols:(i-r0)*panelCols+nc])
		}
	}
}

// padBuf is paddedPanel's scratch: eight rows of a panel and its bias.
type padBuf struct {
	out  [8 * panelCols]float32
	bias [panelCols]float32
}

var padPool = sync.Pool{New: func() any { return new(padBuf) }}

// linearInt8SIMD runs an int8 Linear on the int8 tiles of the active kernel
// set (VPDPBUSD on amd64, SDOT on arm64) if the CPU has them.
func linearInt8SIMD(y []float32, xq []uint32, m int, w *Mat, bias []float32, serial bool) bool {
	set := i8SetFor(active)
	if set == nil {
		return false
	}
	kq := i8K(w.Cols)
	rows := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(xq))), len(xq))
	j := linearJob[int8]{set: set, y: y, x: rows, m: m, wd: w.pq, n: w.Rows,
		lda: kq + 1, kIter: kq, panelLen: i8PanelLen(w.Cols), colStep: quantStep, bias: bias, serial: serial}
	j.run1()
	return true
}
