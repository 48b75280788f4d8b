//go:build gc && !purego

package tensor

var attnSumKernels = map[impl][]func(out, p, v *float32, stride, n int, pf *float32){
	implAVX512: {attnSumAVX512_1, attnSumAVX512_2, attnSumAVX512_3, attnSumAVX512_4,
		attnSumAVX512_5, attnSumAVX512_6, attnSumAVX512_7, attnSumAVX512_8},
	implAVX2: {attnSumAVX2_1, attnSumAVX2_2, attnSumAVX2_3, attnSumAVX2_4,
		attnSumAVX2_5, attnSumAVX2_6, attnSumAVX2_7, attnSumAVX2_8},
}

var attnSumKernelsBF = map[impl][]func(out, p *float32, v *uint16, stride, n int, pf *uint16){
	implAVX512: {attnSumBF16AVX512_1, attnSumBF16AVX512_2, attnSumBF16AVX512_3, attnSumBF16AVX512_4,
		attnSumBF16AVX512_5, attnSumBF16AVX512_6, attnSumBF16AVX512_7, attnSumBF16AVX512_8},
	implAVX2: {attnSumBF16AVX2_1, attnSumBF16AVX2_2, attnSumBF16AVX2_3, attnSumBF16AVX2_4,
		attnSumBF16AVX2_5, attnSumBF16AVX2_6, attnSumBF16AVX2_7, attnSumBF16AVX2_8},
}

var attnSumKernelsI8 = map[impl][]func(out, p *float32, v *int8, stride, n int, vs *float32, pf *int8){
	implAVX512: {attnSumI8AVX512_1, attnSumI8AVX512_2, attnSumI8AVX512_3, attnSumI8AVX512_4,
		attnSumI8AVX512_5, attnSumI8AVX512_6, attnSumI8AVX512_7, attnSumI8AVX512_8},
	implAVX2: {attnSumI8AVX2_1, attnSumI8AVX2_2, attnSumI8AVX2_3, attnSumI8AVX2_4,
		attnSumI8AVX2_5, attnSumI8AVX2_6, attnSumI8AVX2_7, attnSumI8AVX2_8},
}

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

// dequantRowsSIMD is dequantRows on the vector kernels, if hd fits them.
func dequantRowsSIMD(dst []float32, q []int8, s []float32, hd int) bool {
	w := vecWidth()
	if w == 0 || hd == 0 || hd%w != 0 || len(s) == 0 {
		return false
	}
	n := len(s) * hd
	_, _ = dst[n-1], q[n-1]
	if active == implAVX512 {
		dequantRowsAVX512(&dst[0], &q[0], &s[0], len(s), hd)
	} else {
		dequantRowsAVX2(&dst[0], &q[0], &s[0], len(s), hd)
	}
	return true
}

// attnScoresI8SIMD is attnScoresSIMD for int8 keys with their scales ks:
// s[j] = ((q·k_j)·scale)·ks[j], the bytes widened exactly. Row j of pf
// (stride apart like the keys; the values read next; nil: none) is
// prefetched with key j.
func attnScoresI8SIMD(s, q []float32, k []int8, ks []float32, stride int, scale float32, pf []int8) bool {
	w := vecWidth()
	hd := len(q)
	if w == 0 || hd == 0 || hd%w != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1]
	_ = ks[len(s)-1]
	p := prefetchRows(pf, k, len(s), stride)
	if active == implAVX512 {
		attnScoresI8AVX512(&q[0], &k[0], stride, len(s), hd, scale, &s[0], &ks[0], p)
	} else {
		attnScoresI8AVX2(&q[0], &k[0], stride, len(s), hd, scale, &s[0], &ks[0], p)
	}
	return true
}

// attnSumI8SIMD is attnSumSIMD for int8 values with their scales vs: the
// weight of row j is p[j]·vs[j]. Row j of pf (the rows read next; nil:
// none) is prefetched with value j.
func attnSumI8SIMD(out, p []float32, v []int8, vs []float32, stride int, pf []int8) bool {
	w := vecWidth()
	hd := len(out)
	if w == 0 || hd == 0 || hd%w != 0 || hd/w > len(attnSumKernelsI8[active]) || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	_ = vs[len(p)-1]
	attnSumKernelsI8[active][hd/w-1](&out[0], &p[0], &v[0], stride, len(p), &vs[0], prefetchRows(pf, v, len(p), stride))
	return true
}

// attnScoresBFSIMD is attnScoresSIMD for bfloat16 keys (widened exactly in
// the kernel: the same scores as on the widened values).
func attnScoresBFSIMD(s, q []float32, k []uint16, stride int, scale float32, pf []uint16) bool {
	w := vecWidth()
	hd := len(q)
	if w == 0 || hd == 0 || hd%w != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1]
	p := prefetchRows(pf, k, len(s), stride)
	if active == implAVX512 {
		attnScoresBF16AVX512(&q[0], &k[0], stride, len(s), hd, scale, &s[0], p)
	} else {
		attnScoresBF16AVX2(&q[0], &k[0], stride, len(s), hd, scale, &s[0], p)
	}
	return true
}

// attnSumBFSIMD is attnSumSIMD for bfloat16 values.
func attnSumBFSIMD(out, p []float32, v []uint16, stride int, pf []uint16) bool {
	w := vecWidth()
	hd := len(out)
	if w == 0 || hd == 0 || hd%w != 0 || hd/w > len(attnSumKernelsBF[active]) || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	attnSumKernelsBF[active][hd/w-1](&out[0], &p[0], &v[0], stride, len(p), prefetchRows(pf, v, len(p), stride))
	return true
}

// attnScoresSIMD is attnScores on the vector kernels, which prefetch row j
// of pf (the rows read next; nil: none) with key j.
func attnScoresSIMD(s, q, k []float32, stride int, scale float32, pf []float32) bool {
	w := vecWidth()
	hd := len(q)
	if w == 0 || hd == 0 || hd%w != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1] // bounds: the kernel reads every row
	p := prefetchRows(pf, k, len(s), stride)
	if active == implAVX512 {
		attnScoresAVX512(&q[0], &k[0], stride, len(s), hd, scale, &s[0], p)
	} else {
		attnScoresAVX2(&q[0], &k[0], stride, len(s), hd, scale, &s[0], p)
	}
	return true
}

// attnSumSIMD is attnSum on the vector kernels, which prefetch row j of pf
// (the rows read next; nil: none) with value j.
func attnSumSIMD(out, p, v []float32, stride int, pf []float32) bool {
	w := vecWidth()
	hd := len(out)
	if w == 0 || hd == 0 || hd%w != 0 || hd/w > len(attnSumKernels[active]) || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	attnSumKernels[active][hd/w-1](&out[0], &p[0], &v[0], stride, len(p), prefetchRows(pf, v, len(p), stride))
	return true
}
