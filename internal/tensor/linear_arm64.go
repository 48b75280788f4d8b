//go:build gc && !purego

package tensor

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
