package aac

import (
	"math"
	"testing"
)

func TestExplore(t *testing.T) {
	x := loadS16(t, "en_2_48k_3s.s16")
	for _, br := range []int{32000, 64000, 128000} {
		s := encodeAll(t, x, 48000, 1, br, 4800)
		d := decodeFFmpeg(t, s, 48000, 1)
		lag := bestLag(x, d, 4096)
		var xy, xx, yy float64
		for i := range x {
			xy += float64(x[i]) * float64(d[i+lag])
			xx += float64(x[i]) * float64(x[i])
			yy += float64(d[i+lag]) * float64(d[i+lag])
		}
		t.Logf("br %d: bytes %d kbps %.1f dec %d in %d lag %d segSNR %.2f gain %.4f corr %.4f", br, len(s), float64(len(s))*8/3/1000, len(d), len(x), lag, segSNR(x, d[lag:], 48000), xy/xx, xy/ (sqrtf(xx*yy)))
	}
}

func sqrtf(v float64) float64 { return math.Sqrt(v) }
