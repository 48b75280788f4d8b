//go:build gc && !purego

package tensor

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

func detectImpl() impl {
	switch {
	case implAvailable(implAVX512):
		return implAVX512
	case implAvailable(implAVX2):
		return implAVX2
	}
	return implGeneric
}

func implAvailable(i impl) bool {
	switch i {
	case implAVX512:
		return cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ &&
			cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case implAVX2:
		return cpu.X86.HasAVX2 && cpu.X86.HasFMA
	}
	return i == implGeneric
}

var (
	gemmSetsF32  = map[impl]*gemmSet[float32]{}
	gemmSetsBF16 = map[impl]*gemmSet[uint16]{}
)

// bf16DotSet indexes the bfloat16 dot-product tiles; hasBF16Dot says whether
// the CPU runs them.
var (
	bf16DotSet = newGemmSet(bf16DotTiles)
	hasBF16Dot = implAvailable(implAVX512) && cpu.X86.HasAVX512BF16

	// i8Sets holds the int8 tiles per kernel set, where the CPU runs them:
	// AVX512_VNNI, or the VEX-encoded AVX-VNNI beside AVX2.
	i8Sets = map[impl]*gemmSet[int8]{}
)

func init() {
	if implAvailable(implAVX512) && cpu.X86.HasAVX512VNNI {
		i8Sets[implAVX512] = newGemmSet(i8Tiles)
	}
	if implAvailable(implAVX2) && cpu.X86.HasAVXVNNI {
		i8Sets[implAVX2] = newGemmSet(vnniTiles)
	}
}

// i8SetFor returns the int8 tiles to use with kernel set i: its own, or the
// AVX-VNNI ones under AVX-512 on a CPU without AVX512_VNNI.
func i8SetFor(i impl) *gemmSet[int8] {
	if s := i8Sets[i]; s != nil {
		return s
	}
	if i == implAVX512 {
		return i8Sets[implAVX2]
	}
	return nil
}

func init() {
	for i, t := range gemmTilesF32 {
		gemmSetsF32[i] = newGemmSet(t)
	}
	for i, t := range gemmTilesBF16 {
		gemmSetsBF16[i] = newGemmSet(t)
	}
}

func linearSIMD(y, x []float32, m int, w *Mat, bias []float32, serial bool) bool {
	if active == implGeneric {
		return false
	}
	if w.pb16 != nil {
		j := linearJob[uint16]{set: gemmSetsBF16[active], y: y, x: x, m: m, wd: w.pb16, n: w.Rows, bias: bias, serial: serial}
		j.plain(w.Cols)
		j.run1()
	} else {
		j := linearJob[float32]{set: gemmSetsF32[active], y: y, x: x, m: m, wd: w.pf32, n: w.Rows, bias: bias, serial: serial}
		j.plain(w.Cols)
		j.run1()
	}
	return true
}

// widenSIMD widens the longest prefix of src that fills whole vectors and
// returns its length.
func widenSIMD(dst []float32, src []uint16) int {
	switch active {
	case implAVX512:
		if n := len(src) &^ 15; n > 0 {
			widenBF16AVX512(&dst[:n][0], &src[0], n)
			return n
		}
	case implAVX2:
		if n := len(src) &^ 7; n > 0 {
			widenBF16AVX2(&dst[:n][0], &src[0], n)
			return n
		}
	}
	return 0
}

// cvtBF16SIMD rounds the longest multiple-of-32 prefix of src into dst with
// the AVX512_BF16 conversion and returns its length (0 without it).
func cvtBF16SIMD(dst []uint16, src []float32) int {
	n := len(src) &^ 31
	if !hasBF16Dot || n == 0 {
		return 0
	}
	cvtBF16AVX512(&dst[:n][0], &src[0], n)
	return n
}

// linearBF16DotSIMD runs a PackBF16Dot Linear on the VDPBF16PS kernels if the CPU
// has them and the AVX-512 kernels are active.
func linearBF16DotSIMD(y []float32, xb []uint16, m int, w *Mat, bias []float32, serial bool) bool {
	if !HasBF16Dot() {
		return false
	}
	j := bf16DotJob(bf16DotSet, y, xb, m, w, bias)
	j.serial = serial
	j.run1()
	return true
}

// bf16DotJob prepares the panel job of a dot-product Linear: the bfloat16 rows
// are read by the kernels as float32-sized pairs.
func bf16DotJob(set *gemmSet[uint16], y []float32, xb []uint16, m int, w *Mat, bias []float32) linearJob[uint16] {
	kp := dotK(w.Cols) / 2
	pairs := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(xb))), m*kp)
	return linearJob[uint16]{set: set, y: y, x: pairs, m: m, wd: w.pdot, n: w.Rows,
		lda: kp, kIter: kp, panelLen: 2 * panelCols * kp, colStep: 2, bias: bias}
}

// absMaxSIMD is absMaxBits for the longest prefix of v that fills whole
// vectors; it returns that maximum and the prefix's length.
func absMaxSIMD(v []float32) (uint32, int) {
	switch active {
	case implAVX512:
		if n := len(v) &^ 15; n > 0 {
			return absMaxBitsAVX512(&v[0], n), n
		}
	case implAVX2:
		if n := len(v) &^ 7; n > 0 {
			return absMaxBitsAVX2(&v[0], n), n
		}
	}
	return 0, 0
}

// quantSIMD stores round-half-even(v[i]·inv) + 128 into q for the longest
// prefix of v the kernels take and returns its length.
func quantSIMD(q []int8, v []float32, inv float32) int {
	switch active {
	case implAVX512:
		if n := len(v) &^ 15; n > 0 {
			quantI8AVX512(&q[:n][0], &v[0], n, inv)
			return n
		}
	case implAVX2:
		if n := len(v) &^ 31; n > 0 {
			quantI8AVX2(&q[:n][0], &v[0], n, inv)
			return n
		}
	}
	return 0
}
