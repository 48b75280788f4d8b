package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDot2Generic checks that the two-row portable dot product gives
// dotGeneric's bits for each row, for every tail length and with zeros of
// both signs, infinities and NaN among the inputs.
func TestDot2Generic(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32, math.MaxFloat32}
	for n := 0; n <= 40; n++ {
		for trial := range 20 {
			x, w0, w1 := randVec(r, n), randVec(r, n), randVec(r, n)
			if trial%2 == 1 && n > 0 {
				for _, v := range [][]float32{x, w0, w1} {
					v[r.IntN(n)] = specials[r.IntN(len(specials))]
				}
			}
			g0, g1 := dot2Generic(x, w0, w1)
			want0, want1 := dotGeneric(x, w0), dotGeneric(x, w1)
			if math.Float32bits(g0) != math.Float32bits(want0) || math.Float32bits(g1) != math.Float32bits(want1) {
				t.Fatalf("n=%d trial %d: dot2Generic = %v, %v; dotGeneric = %v, %v", n, trial, g0, g1, want0, want1)
			}
		}
	}
}
