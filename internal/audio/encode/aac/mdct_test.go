package aac

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMDCTMatchesDefinition compares the FFT-based MDCT with the O(N²)
// formula of ISO/IEC 14496-3 4.6.11 on random input.
func TestMDCTMatchesDefinition(t *testing.T) {
	const scale = 2.0
	m := newMDCT(scale)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 2*frameLen)
	for i := range x {
		x[i] = rng.Float64()*2 - 1
	}
	got := make([]float64, frameLen)
	m.transform(x, got)
	const n0 = frameLen/2 + 0.5
	var maxErr, maxRef float64
	for k := 0; k < frameLen; k++ {
		var s float64
		for n := range x {
			s += x[n] * m.window[n] * math.Cos(math.Pi/frameLen*(float64(n)+n0)*(float64(k)+0.5))
		}
		s *= scale
		maxErr = max(maxErr, math.Abs(s-got[k]))
		maxRef = max(maxRef, math.Abs(s))
	}
	if maxErr > 1e-9*maxRef {
		t.Fatalf("max error %g (max |X| %g)", maxErr, maxRef)
	}
}
