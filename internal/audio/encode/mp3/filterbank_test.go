package mp3

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAnalysisMatchesStandard compares the folded filterbank with the
// standard's direct form S[k] = Σ_i cos((2k+1)(i-16)π/64)·Y[i].
func TestAnalysisMatchesStandard(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var c channelState
	for i := range c.pcm {
		c.pcm[i] = rng.Float64()*2 - 1
	}
	pcm := c.pcm
	var xr [576]float64
	c.analyze(&xr)
	for slot := 0; slot < 18; slot++ {
		x := pcm[slot*32 : slot*32+512]
		var y [64]float64
		for i := 0; i < 512; i++ {
			// X[i] is the i-th newest sample; C[i] = D[i]/32.
			y[i%64] += synthesisWindow[i] / 32 * x[511-i]
		}
		for k := 0; k < 32; k++ {
			var s float64
			for i := 0; i < 64; i++ {
				s += math.Cos(float64((2*k+1)*(i-16))*math.Pi/64) * y[i]
			}
			if d := math.Abs(s - c.cur[k][slot]); d > 1e-12 {
				t.Fatalf("slot %d subband %d: %g, direct form %g", slot, k, c.cur[k][slot], s)
			}
		}
	}
}
