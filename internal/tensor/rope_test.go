package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoPEAnglesRotate checks that Angles+Rotate is Apply bit for bit, inside
// and past the table.
func TestRoPEAnglesRotate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const hd = 16
	rp := NewRoPE(hd, 10000, 8)
	cs, sn := make([]float32, hd/2), make([]float32, hd/2)
	for _, pos := range []int{0, 1, 7, 8, 9, 1000, 123456} {
		x := randVec(r, 3*hd)
		want := append([]float32(nil), x...)
		rp.Apply(want, pos)
		rp.Angles(pos, cs, sn)
		rp.Rotate(x, cs, sn)
		if !bitsEqual(x, want) {
			t.Fatalf("pos %d: Angles+Rotate differs from Apply", pos)
		}
	}
}

// TestRoPEPairs checks that PairAngles+RotatePairs is Apply bit for bit on
// every implementation, for head sizes that are and are not a whole number
// of vectors, special values included.
func TestRoPEPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, hd := range []int{2, 6, 16, 18, 64, 128} {
		rp := NewRoPE(hd, 10000, 8)
		c, s := make([]float32, hd), make([]float32, hd)
		for _, pos := range []int{0, 1, 7, 8, 9, 1000, 123456} {
			for _, heads := range []int{1, 4} {
				x0 := randVec(r, heads*hd)
				x0[r.IntN(len(x0))] = float32(math.Inf(1))
				x0[r.IntN(len(x0))] = float32(math.Copysign(0, -1))
				want := append([]float32(nil), x0...)
				rp.Apply(want, pos)
				rp.PairAngles(pos, c, s)
				for _, im := range impls() {
					useImpl(t, im)
					x := append([]float32(nil), x0...)
					rp.RotatePairs(x, c, s)
					if !bitsEqual(x, want) {
						t.Fatalf("hd %d pos %d heads %d %v: PairAngles+RotatePairs differs from Apply", hd, pos, heads, im)
					}
				}
			}
		}
	}
}
