package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSoftmax is one attention row's softmax: lengths with and
// without a tail shorter than a vector (the portable exponential's part).
func BenchmarkSoftmax(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{17, 144, 150, 159, 400} {
		src := randVec(r, n)
		x := make([]float32, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, src)
				Softmax(x)
			}
		})
	}
}
