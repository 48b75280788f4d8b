//go:build gc && !purego

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxTail: the vector kernels' Softmax computes a row's tail
// (shorter than a vector) with exp64v and adds it to the sum in order of
// the elements: bit for bit what exp64 element by element gives, for every
// tail length, NaN-free rows with huge, tiny and -Inf scores included.
func TestSoftmaxTail(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, im := range impls() {
		if im == implGeneric {
			continue
		}
		useImpl(t, im)
		w := vecWidth()
		for _, n := range []int{1, 2, 3, w - 1, w, w + 1, w + 2, 2*w - 1, 3*w + 5, 150, 159} {
			for trial := range 4 {
				x := randVec(r, n)
				for i := range x {
					x[i] *= 30
					switch {
					case trial == 1 && i%3 == 0:
						x[i] = float32(math.Inf(-1))
					case trial == 2 && i%5 == 1:
						x[i] = -1e30
					case trial == 3:
						x[i] = float32(i % 2) // ties
					}
				}
				want := append([]float32(nil), x...)
				softmaxScalarTail(want)
				got := append([]float32(nil), x...)
				Softmax(got)
				if !bitsEqual(got, want) {
					t.Fatalf("%v, n=%d, trial %d: %v, want %v", im, n, trial, got, want)
				}
			}
		}
	}
}

// softmaxScalarTail is Softmax with the tail's exponentials from exp64,
// one at a time.
func softmaxScalarTail(x []float32) {
	mx := maxF32(x)
	nv, _ := split(len(x))
	s, _ := expSumSIMD(x[:nv], mx) // whole vectors only: expsum
	for i := nv; i < len(x); i++ {
		e := exp64(float64(x[i] - mx))
		x[i] = float32(e)
		s += e
	}
	Scale(x, float32(1/s))
}
