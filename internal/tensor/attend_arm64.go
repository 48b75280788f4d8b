//go:build gc && !purego

package tensor

// The attention kernels on arm64, over float32, bfloat16 and int8 caches
// (the int8 mode keeps its global cache in int8 and its local one in
// bfloat16). Every key and value is widened exactly in the kernels.

// prefetchRows returns the first of n rows stride apart of pf for a kernel
// to prefetch, or of rows (what the kernel reads anyway) when pf is nil,
// checking that they lie in the slice.
func prefetchRows[T any](pf, rows []T, n, stride int) *T {
	if pf == nil {
		pf = rows
	}
	_ = pf[(n-1)*stride]
	return &pf[0]
}

// attnScoresSIMD is attnScores on the NEON kernel, which prefetches row j
// of pf (the rows read next; nil: none) with key j.
func attnScoresSIMD(s, q, k []float32, stride int, scale float32, pf []float32) bool {
	hd := len(q)
	if active != implNEON || hd == 0 || hd%4 != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1] // bounds: the kernel reads every row
	attnScoresNEON(&q[0], &k[0], stride, len(s), hd, scale, &s[0], prefetchRows(pf, k, len(s), stride))
	return true
}

// attnSumSIMD is attnSum on the NEON kernels, 64 columns at a time; the
// first block prefetches row j of pf (nil: none) with value j.
func attnSumSIMD(out, p, v []float32, stride int, pf []float32) bool {
	hd := len(out)
	if active != implNEON || hd == 0 || hd%4 != 0 || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	pr := prefetchRows(pf, v, len(p), stride)
	for c0 := 0; c0 < hd; c0 += 4 * attnSumMaxVecs {
		nv := min(attnSumMaxVecs, (hd-c0)/4)
		if c0 > 0 {
			pr = &v[c0] // later blocks: their own columns, read anyway
		}
		attnSumNEON[nv-1](&out[c0], &p[0], &v[c0], stride, len(p), pr)
	}
	return true
}

// attnSumMaxVecs is the widest block of the attnSumNEON kernels, in
// vectors.
const attnSumMaxVecs = len(attnSumNEON)

// attnScoresBFSIMD is attnScoresSIMD for bfloat16 keys (widened exactly in
// the kernel: the same scores as on the widened values).
func attnScoresBFSIMD(s, q []float32, k []uint16, stride int, scale float32, pf []uint16) bool {
	hd := len(q)
	if active != implNEON || hd == 0 || hd%4 != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1]
	attnScoresBF16NEON(&q[0], &k[0], stride, len(s), hd, scale, &s[0], prefetchRows(pf, k, len(s), stride))
	return true
}

// attnSumBFSIMD is attnSumSIMD for bfloat16 values.
func attnSumBFSIMD(out, p []float32, v []uint16, stride int, pf []uint16) bool {
	hd := len(out)
	if active != implNEON || hd == 0 || hd%4 != 0 || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	pr := prefetchRows(pf, v, len(p), stride)
	for c0 := 0; c0 < hd; c0 += 4 * attnSumMaxVecs {
		nv := min(attnSumMaxVecs, (hd-c0)/4)
		if c0 > 0 {
			pr = &v[c0]
		}
		attnSumBF16NEON[nv-1](&out[c0], &p[0], &v[c0], stride, len(p), pr)
	}
	return true
}

// attnScoresI8SIMD is attnScoresSIMD for int8 keys with their scales ks:
// s[j] = ((q·k_j)·scale)·ks[j], the bytes widened exactly.
func attnScoresI8SIMD(s, q []float32, k []int8, ks []float32, stride int, scale float32, pf []int8) bool {
	hd := len(q)
	if active != implNEON || hd == 0 || hd%4 != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1]
	_ = ks[len(s)-1]
	attnScoresI8NEON(&q[0], &k[0], stride, len(s), hd, scale, &s[0], &ks[0], prefetchRows(pf, k, len(s), stride))
	return true
}

// attnSumI8SIMD is attnSumSIMD for int8 values with their scales vs: the
// weight of row j is p[j]·vs[j].
func attnSumI8SIMD(out, p []float32, v []int8, vs []float32, stride int, pf []int8) bool {
	hd := len(out)
	if active != implNEON || hd == 0 || hd%4 != 0 || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	_ = vs[len(p)-1]
	pr := prefetchRows(pf, v, len(p), stride)
	for c0 := 0; c0 < hd; c0 += 4 * attnSumMaxVecs {
		nv := min(attnSumMaxVecs, (hd-c0)/4)
		if c0 > 0 {
			pr = &v[c0]
		}
		attnSumI8NEON[nv-1](&out[c0], &p[0], &v[c0], stride, len(p), &vs[0], pr)
	}
	return true
}

// dequantRowsSIMD has no NEON kernel: the portable loop widens the rows.
func dequantRowsSIMD(dst []float32, q []int8, s []float32, hd int) bool { return false }
