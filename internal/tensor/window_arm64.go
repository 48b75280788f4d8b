//go:build gc && !purego

package tensor

// windowTileShape is the arm64 tiling, four rows to a vector: 16-row
// tiles (four vectors) while more than 8 rows remain, then an 8-row tile,
// or a 4-row one for at most 4 rows. Sixteen rows keep the weighted sums'
// accumulators, probabilities and masks within the 32 vector registers.
func windowTileShape(rem int) (lanes, vectors int) {
	switch {
	case active != implNEON:
		return 0, 0
	case rem > 8:
		return 4, 4
	case rem > 4:
		return 4, 2
	}
	return 4, 1
}

// windowKernelsFor returns the kernel set of a tile shape windowTileShape
// chose (generated with the kernels: kernels_decl_arm64.go).
func windowKernelsFor(lanes, vectors int) *windowKernels {
	switch vectors {
	case 4:
		return &windowKernelsNEON4
	case 2:
		return &windowKernelsNEON2
	}
	return &windowKernelsNEON1
}
