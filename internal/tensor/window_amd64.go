//go:build gc && !purego

package tensor

// Every lane performs the same IEEE operations in the same order whatever
// the kernel set, so all of them give bit-identical per-row results; the
// 8-lane (AVX2) sets also serve AVX-512 machines for tiles of at most 8 rows.
var (
	windowKernels16 = windowKernels{
		scores:  mqScoresAVX512,
		softmax: mqSoftmaxAVX512,
		pv: []func(oT, pT, v *float32, stride, n int){mqPVAVX512_1, mqPVAVX512_2, mqPVAVX512_3, mqPVAVX512_4,
			mqPVAVX512_5, mqPVAVX512_6, mqPVAVX512_7, mqPVAVX512_8, mqPVAVX512_9, mqPVAVX512_10, mqPVAVX512_11,
			mqPVAVX512_12, mqPVAVX512_13, mqPVAVX512_14, mqPVAVX512_15, mqPVAVX512_16},
		pvMask: []func(oT, pT, v *float32, stride, n int, win *int32, j0 int){mqPVMaskAVX512_1, mqPVMaskAVX512_2,
			mqPVMaskAVX512_3, mqPVMaskAVX512_4, mqPVMaskAVX512_5, mqPVMaskAVX512_6, mqPVMaskAVX512_7, mqPVMaskAVX512_8,
			mqPVMaskAVX512_9, mqPVMaskAVX512_10, mqPVMaskAVX512_11, mqPVMaskAVX512_12, mqPVMaskAVX512_13,
			mqPVMaskAVX512_14, mqPVMaskAVX512_15, mqPVMaskAVX512_16},
		scoresBF:  mqScoresBF16AVX512,
		scoresDot: mqScoresDotAVX512,
		pvBF:      []func(oT, pT *float32, v *uint16, stride, n int){mqPVBF16AVX512_1, mqPVBF16AVX512_2, mqPVBF16AVX512_3, mqPVBF16AVX512_4, mqPVBF16AVX512_5, mqPVBF16AVX512_6, mqPVBF16AVX512_7, mqPVBF16AVX512_8, mqPVBF16AVX512_9, mqPVBF16AVX512_10, mqPVBF16AVX512_11, mqPVBF16AVX512_12, mqPVBF16AVX512_13, mqPVBF16AVX512_14, mqPVBF16AVX512_15, mqPVBF16AVX512_16},
		pvMaskBF:  []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVMaskBF16AVX512_1, mqPVMaskBF16AVX512_2, mqPVMaskBF16AVX512_3, mqPVMaskBF16AVX512_4, mqPVMaskBF16AVX512_5, mqPVMaskBF16AVX512_6, mqPVMaskBF16AVX512_7, mqPVMaskBF16AVX512_8, mqPVMaskBF16AVX512_9, mqPVMaskBF16AVX512_10, mqPVMaskBF16AVX512_11, mqPVMaskBF16AVX512_12, mqPVMaskBF16AVX512_13, mqPVMaskBF16AVX512_14, mqPVMaskBF16AVX512_15, mqPVMaskBF16AVX512_16},
		pairsDot:  mqPairsDotAVX512,
		pvDot:     []func(oT, pT *float32, v *uint16, stride, n int){mqPVDotAVX512_2, mqPVDotAVX512_4, mqPVDotAVX512_6, mqPVDotAVX512_8, mqPVDotAVX512_10, mqPVDotAVX512_12, mqPVDotAVX512_14, mqPVDotAVX512_16},
		pvDotMask: []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVDotMaskAVX512_2, mqPVDotMaskAVX512_4, mqPVDotMaskAVX512_6, mqPVDotMaskAVX512_8, mqPVDotMaskAVX512_10, mqPVDotMaskAVX512_12, mqPVDotMaskAVX512_14, mqPVDotMaskAVX512_16},
	}
	windowKernels16x2 = windowKernels{
		scores:  mqScoresAVX512x2,
		softmax: mqSoftmaxAVX512,
		pv: []func(oT, pT, v *float32, stride, n int){mqPVAVX512x2_1, mqPVAVX512x2_2, mqPVAVX512x2_3,
			mqPVAVX512x2_4, mqPVAVX512x2_5, mqPVAVX512x2_6, mqPVAVX512x2_7, mqPVAVX512x2_8},
		pvMask: []func(oT, pT, v *float32, stride, n int, win *int32, j0 int){mqPVMaskAVX512x2_1, mqPVMaskAVX512x2_2,
			mqPVMaskAVX512x2_3, mqPVMaskAVX512x2_4, mqPVMaskAVX512x2_5, mqPVMaskAVX512x2_6, mqPVMaskAVX512x2_7,
			mqPVMaskAVX512x2_8},
		scoresBF:  mqScoresBF16AVX512x2,
		scoresDot: mqScoresDotAVX512x2,
		pvBF:      []func(oT, pT *float32, v *uint16, stride, n int){mqPVBF16AVX512x2_1, mqPVBF16AVX512x2_2, mqPVBF16AVX512x2_3, mqPVBF16AVX512x2_4, mqPVBF16AVX512x2_5, mqPVBF16AVX512x2_6, mqPVBF16AVX512x2_7, mqPVBF16AVX512x2_8},
		pvMaskBF:  []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVMaskBF16AVX512x2_1, mqPVMaskBF16AVX512x2_2, mqPVMaskBF16AVX512x2_3, mqPVMaskBF16AVX512x2_4, mqPVMaskBF16AVX512x2_5, mqPVMaskBF16AVX512x2_6, mqPVMaskBF16AVX512x2_7, mqPVMaskBF16AVX512x2_8},
		pairsDot:  mqPairsDotAVX512x2,
		pvDot:     []func(oT, pT *float32, v *uint16, stride, n int){mqPVDotAVX512x2_2, mqPVDotAVX512x2_4, mqPVDotAVX512x2_6, mqPVDotAVX512x2_8},
		pvDotMask: []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVDotMaskAVX512x2_2, mqPVDotMaskAVX512x2_4, mqPVDotMaskAVX512x2_6, mqPVDotMaskAVX512x2_8},
	}
	windowKernels8 = windowKernels{
		scores:  mqScoresAVX2,
		softmax: mqSoftmaxAVX2,
		pv: []func(oT, pT, v *float32, stride, n int){mqPVAVX2_1, mqPVAVX2_2, mqPVAVX2_3, mqPVAVX2_4,
			mqPVAVX2_5, mqPVAVX2_6, mqPVAVX2_7, mqPVAVX2_8},
		pvMask: []func(oT, pT, v *float32, stride, n int, win *int32, j0 int){mqPVMaskAVX2_1, mqPVMaskAVX2_2,
			mqPVMaskAVX2_3, mqPVMaskAVX2_4, mqPVMaskAVX2_5, mqPVMaskAVX2_6, mqPVMaskAVX2_7, mqPVMaskAVX2_8},
		scoresBF:  mqScoresBF16AVX2,
		scoresDot: mqScoresDotAVX512Y,
		pvBF:      []func(oT, pT *float32, v *uint16, stride, n int){mqPVBF16AVX2_1, mqPVBF16AVX2_2, mqPVBF16AVX2_3, mqPVBF16AVX2_4, mqPVBF16AVX2_5, mqPVBF16AVX2_6, mqPVBF16AVX2_7, mqPVBF16AVX2_8},
		pvMaskBF:  []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVMaskBF16AVX2_1, mqPVMaskBF16AVX2_2, mqPVMaskBF16AVX2_3, mqPVMaskBF16AVX2_4, mqPVMaskBF16AVX2_5, mqPVMaskBF16AVX2_6, mqPVMaskBF16AVX2_7, mqPVMaskBF16AVX2_8},
		pairsDot:  mqPairsDotAVX512Y,
		pvDot:     []func(oT, pT *float32, v *uint16, stride, n int){mqPVDotAVX512Y_2, mqPVDotAVX512Y_4, mqPVDotAVX512Y_6, mqPVDotAVX512Y_8, mqPVDotAVX512Y_10, mqPVDotAVX512Y_12, mqPVDotAVX512Y_14, mqPVDotAVX512Y_16},
		pvDotMask: []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVDotMaskAVX512Y_2, mqPVDotMaskAVX512Y_4, mqPVDotMaskAVX512Y_6, mqPVDotMaskAVX512Y_8, mqPVDotMaskAVX512Y_10, mqPVDotMaskAVX512Y_12, mqPVDotMaskAVX512Y_14, mqPVDotMaskAVX512Y_16},
	}
	windowKernels8x2 = windowKernels{
		scores:  mqScoresAVX2x2,
		softmax: mqSoftmaxAVX2,
		pv:      []func(oT, pT, v *float32, stride, n int){mqPVAVX2x2_1, mqPVAVX2x2_2, mqPVAVX2x2_3, mqPVAVX2x2_4},
		pvMask: []func(oT, pT, v *float32, stride, n int, win *int32, j0 int){mqPVMaskAVX2x2_1, mqPVMaskAVX2x2_2,
			mqPVMaskAVX2x2_3, mqPVMaskAVX2x2_4},
		scoresBF: mqScoresBF16AVX2x2,
		pvBF:     []func(oT, pT *float32, v *uint16, stride, n int){mqPVBF16AVX2x2_1, mqPVBF16AVX2x2_2, mqPVBF16AVX2x2_3, mqPVBF16AVX2x2_4},
		pvMaskBF: []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int){mqPVMaskBF16AVX2x2_1, mqPVMaskBF16AVX2x2_2, mqPVMaskBF16AVX2x2_3, mqPVMaskBF16AVX2x2_4},
	}
)

// windowTileShape is the amd64 tiling: with AVX-512, 32-row tiles (two
// vectors) while more than 16 rows remain, then a 16-row tile, or an 8-lane
// tile for at most 8 rows (half the wasted lanes); with AVX2, 16-row tiles
// (two vectors) while more than 8 rows remain, then an 8-row tile.
func windowTileShape(rem int) (lanes, vectors int) {
	switch {
	case active == implAVX512 && rem > 16:
		return 16, 2
	case active == implAVX512 && rem > 8:
		return 16, 1
	case active == implAVX2 && rem > 8:
		return 8, 2
	case active != implGeneric:
		return 8, 1
	}
	return 0, 0
}

// windowKernelsFor returns the kernel set of a tile shape windowTileShape
// chose.
func windowKernelsFor(lanes, vectors int) *windowKernels {
	switch {
	case lanes == 16 && vectors == 2:
		return &windowKernels16x2
	case lanes == 16:
		return &windowKernels16
	case vectors == 2:
		return &windowKernels8x2
	}
	return &windowKernels8
}
