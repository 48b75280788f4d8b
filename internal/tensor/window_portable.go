//go:build !(amd64 || arm64) || !gc || purego

package tensor

// windowTiles cuts nq rows into 8-row chunks of the portable code.
func windowTiles(dst []windowTile, nq int) []windowTile {
	for r0 := 0; r0 < nq; r0 += 8 {
		dst = append(dst, windowTile{r0: r0, n: min(8, nq-r0)})
	}
	return dst
}

func windowTileSIMD(j *windowsJob, t *windowTile, h int, sp *[]float32) {
	panic("tensor: no SIMD attention kernels in this build")
}
