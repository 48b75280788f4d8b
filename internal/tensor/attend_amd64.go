//go:build !purego

package tensor

var attnSumKernels = map[impl][]func(out, p, v *float32, stride, n int){
	implAVX512: {attnSumAVX512_1, attnSumAVX512_2, attnSumAVX512_3, attnSumAVX512_4,
		attnSumAVX512_5, attnSumAVX512_6, attnSumAVX512_7, attnSumAVX512_8},
	implAVX2: {attnSumAVX2_1, attnSumAVX2_2, attnSumAVX2_3, attnSumAVX2_4,
		attnSumAVX2_5, attnSumAVX2_6, attnSumAVX2_7, attnSumAVX2_8},
}

func attnScoresSIMD(s, q, k []float32, stride int, scale float32) bool {
	w := vecWidth()
	hd := len(q)
	if w == 0 || hd == 0 || hd%w != 0 || len(s) == 0 {
		return false
	}
	_ = k[(len(s)-1)*stride+hd-1] // bounds: the kernel reads every row
	if active == implAVX512 {
		attnScoresAVX512(&q[0], &k[0], stride, len(s), hd, scale, &s[0])
	} else {
		attnScoresAVX2(&q[0], &k[0], stride, len(s), hd, scale, &s[0])
	}
	return true
}

func attnSumSIMD(out, p, v []float32, stride int) bool {
	w := vecWidth()
	hd := len(out)
	if w == 0 || hd == 0 || hd%w != 0 || hd/w > len(attnSumKernels[active]) || len(p) == 0 {
		return false
	}
	_ = v[(len(p)-1)*stride+hd-1]
	attnSumKernels[active][hd/w-1](&out[0], &p[0], &v[0], stride, len(p))
	return true
}
