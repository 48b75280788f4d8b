package tensor

import (
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
