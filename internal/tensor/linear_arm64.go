//go:build gc && !purego

package tensor

import "unsafe"

// The float32 Linear on arm64: the generated NEON tiles (kernels_arm64.s)
// over the panel-packed weights, driven by linear_driver.go like the
// amd64 tiles. float32 and bfloat16 panels (Pack of a BF16 matrix)
// each have their tiles.

// The float32 and bfloat16 tile sets.
var (
	gemmSetF32  = newGemmSet(gemmTilesF32[implNEON])
	gemmSetBF16 = newGemmSet(gemmTilesBF16[implNEON])
)

func linearSIMD(y, x []float32, m int, w *Mat, bias []float32, serial bool) bool {
	if active != implNEON {
		return false
	}
	k := w.Cols
	switch {
	case w.pf32 != nil:
		j := linearJob[float32]{set: gemmSetF32, y: y, x: x, m: m, wd: w.pf32, n: w.Rows, bias: bias, serial: serial,
			lda: k, kIter: k, panelLen: panelCols * k, colStep: 1}
		j.run1()
	case w.pb16 != nil:
		j := linearJob[uint16]{set: gemmSetBF16, y: y, x: x, m: m, wd: w.pb16, n: w.Rows, bias: bias, serial: serial,
			lda: k, kIter: k, panelLen: panelCols * k, colStep: 1}
		j.run1()
	default:
		return false
	}
	return true
}

// gemmSetI8 indexes the int8 tiles where the CPU has SDOT.
var gemmSetI8 = newGemmSet(gemmTilesI8)

// bfdotSet indexes the bfloat16 dot-product tiles (BFDOT), run where the CPU
// has FEAT_BF16 (hasBF16Dot).
var bfdotSet = newGemmSet(bfdotTiles)

// linearBF16DotSIMD runs a PackBF16Dot Linear on the BFDOT tiles if the CPU
// has them and the NEON kernels are active.
//
// BFDOT is not VDPBF16PS: per pair it rounds both products and their sum
// before adding it to the accumulator, every step rounded to odd (the
// lowest bit of an inexact result forced to 1, overflow to infinity) with
// denormal inputs and results flushed to zero (Arm ARM, BFDOT with
// FPCR.EBF 0, which is how Linux and macOS run programs). So the values
// differ from the portable code's (and amd64's) in the last bits; what
// stays is the mode's contract: per output one chain over the pairs of k in
// order, from zero, then + bias, independent of the batch, the other rows,
// the tiles and the threads.
func linearBF16DotSIMD(y []float32, xb []uint16, m int, w *Mat, bias []float32, serial bool) bool {
	if !HasBF16Dot() {
		return false
	}
	kp := dotK(w.Cols) / 2
	pairs := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(xb))), m*kp)
	j := linearJob[uint16]{set: bfdotSet, y: y, x: pairs, m: m, wd: w.pdot, n: w.Rows, bias: bias, serial: serial,
		lda: kp, kIter: kp, panelLen: 2 * panelCols * kp, colStep: 2}
	j.run1()
	return true
}
