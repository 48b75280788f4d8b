//go:build gc && !purego

package tensor

// The float32 attention kernels on arm64. The bfloat16 and int8 caches
// have no NEON kernels yet: their entry points report false and the
// portable code widens the rows.

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

func attnScoresBFSIMD(s, q []float32, k []uint16, stride int, scale float32, pf []uint16) bool {
	return false
}
func attnSumBFSIMD(out, p []float32, v []uint16, stride int, pf []uint16) bool { return false }
func attnScoresI8SIMD(s, q []float32, k []int8, ks []float32, stride int, scale float32, pf []int8) bool {
	return false
}
func dequantRowsSIMD(dst []float32, q []int8, s []float32, hd int) bool { return false }
func attnSumI8SIMD(out, p []float32, v []int8, vs []float32, stride int, pf []int8) bool {
	return false
}
