package mp3

import "math"

// Precomputed transforms. The analysis filterbank is ISO/IEC 11172-3
// C.1.3 (512-tap window, 32 cosine-modulated subbands); the MDCT is the
// long-block (36-point, sine-windowed) transform whose inverse the decoder
// applies, scaled by 1/9 so that MDCT, IMDCT and overlap-add are the
// identity.
var (
	// analysisWin[j] is C[511-j]: the window applied to the j-th oldest
	// sample of the 512 in the filter's history.
	analysisWin [512]float64
	// matrix[k][m] = cos((2k+1)mπ/64): the standard's M[k][i] =
	// cos((2k+1)(i-16)π/64) folded by its symmetries to m = 0..31 (see
	// analyze).
	matrix [32][32]float64
	// mdctCos[k][i] = sin-window(i)·cos(π/72·(2i+19)(2k+1))/9.
	mdctCos [18][36]float64
	// Encoder-sense alias-reduction butterflies: the inverse rotation of the
	// decoder's.
	aliasCS, aliasCA [8]float64
	// quantStep[g] = 2^(-3/16·(g-210)): multiplying |x|^(3/4) by it gives
	// the unrounded quantized magnitude for global_gain g.
	quantStep [256]float64
)

func init() {
	for j := range analysisWin {
		analysisWin[j] = synthesisWindow[511-j] / 32
	}
	for k := range matrix {
		for i := range matrix[k] {
			matrix[k][i] = math.Cos(float64((2*k+1)*i) * math.Pi / 64)
		}
	}
	for k := range mdctCos {
		for i := range mdctCos[k] {
			w := math.Sin(math.Pi / 36 * (float64(i) + 0.5))
			mdctCos[k][i] = w * math.Cos(math.Pi/72*float64((2*i+19)*(2*k+1))) / 9
		}
	}
	for i, c := range aliasC {
		d := math.Sqrt(1 + c*c)
		aliasCS[i], aliasCA[i] = 1/d, c/d
	}
	for g := range quantStep {
		quantStep[g] = math.Pow(2, -3.0/16*float64(g-210))
	}
}

// histLen is the filterbank history kept between granules: the 512-tap
// window needs the 480 samples before the granule's first 32-sample slot.
const histLen = 480

// channelState is one channel's filterbank memory.
type channelState struct {
	// pcm holds histLen past samples followed by one granule's 576 new ones.
	pcm [histLen + 576]float64
	// prev is the previous granule's subband samples, the first half of
	// every MDCT block.
	prev [32][18]float64
	cur  [32][18]float64
}

// analyze turns the 576 samples in c.pcm[histLen:] into 576 MDCT lines in
// xr (alias-reduced, subband-major: line 18*sb+k), then shifts the history.
func (c *channelState) analyze(xr *[576]float64) {
	var y [64]float64
	var a [32]float64
	for slot := 0; slot < 18; slot++ {
		// Windowing and the 8-fold partial sums of the standard's Z and Y;
		// x is chronological, so X[i] of the standard is x[511-i].
		x := c.pcm[slot*32 : slot*32+512]
		for i := 0; i < 64; i++ {
			var s float64
			for j := 0; j < 8; j++ {
				n := 511 - (i + 64*j)
				s += analysisWin[n] * x[n]
			}
			y[i] = s
		}
		// M[k][i] depends on m = i-16 through cos((2k+1)mπ/64), which is
		// even in m and odd about m = 32 (and zero there), so 64 inputs fold
		// into 32 before the matrix multiply.
		a[0] = y[16]
		for m := 1; m <= 16; m++ {
			a[m] = y[16+m] + y[16-m]
		}
		for m := 17; m < 32; m++ {
			a[m] = y[16+m] - y[80-m]
		}
		for k := 0; k < 32; k++ {
			mk := &matrix[k]
			var s float64
			for m := 0; m < 32; m++ {
				s += mk[m] * a[m]
			}
			c.cur[k][slot] = s
		}
	}
	copy(c.pcm[:histLen], c.pcm[576:])

	var z [36]float64
	for sb := 0; sb < 32; sb++ {
		copy(z[:18], c.prev[sb][:])
		copy(z[18:], c.cur[sb][:])
		if sb&1 == 1 {
			// The decoder negates odd samples of odd subbands after the
			// IMDCT (frequency inversion), so undo it here.
			for i := 1; i < 36; i += 2 {
				z[i] = -z[i]
			}
		}
		out := xr[sb*18 : sb*18+18]
		for k := 0; k < 18; k++ {
			m := &mdctCos[k]
			var s float64
			for i := 0; i < 36; i++ {
				s += m[i] * z[i]
			}
			out[k] = s
		}
	}
	c.prev = c.cur

	for sb := 1; sb < 32; sb++ {
		for i := 0; i < 8; i++ {
			lo, hi := 18*sb-1-i, 18*sb+i
			a, b := xr[lo], xr[hi]
			xr[lo] = a*aliasCS[i] + b*aliasCA[i]
			xr[hi] = b*aliasCS[i] - a*aliasCA[i]
		}
	}
}
