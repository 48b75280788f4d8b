package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBF16Rounding(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie → even
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie → even (up)
		{math.Float32frombits(0x3f808001), 0x3f81},
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, tc := range tests {
		if got := F32ToBF16(tc.in); got != tc.want {
			t.Errorf("F32ToBF16(%v) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	if got := F32ToBF16(float32(math.NaN())); BF16ToF32(got) == BF16ToF32(got) {
		t.Errorf("NaN not preserved: %#x", got)
	}
}

func TestLayerNormGELUSoftmax(t *testing.T) {
	x := []float32{1, 2, 3, 4, -1, 0, 1, 2}
	g := []float32{1, 2, 1, 1}
	b := []float32{0, 0, 1, 0}
	y := make([]float32, 8)
	LayerNorm(y, x, 2, g, b, 1e-5)
	// row 0: mean 2.5, var 1.25
	inv := 1 / math.Sqrt(1.25+1e-5)
	want := []float64{-1.5 * inv, -0.5 * inv * 2, 0.5*inv + 1, 1.5 * inv}
	for i, w := range want {
		if !near(float64(y[i]), w, 1e-6) || !near(float64(y[4+i]), w, 1e-6) {
			t.Fatalf("LayerNorm = %v, want %v (both rows)", y, want)
		}
	}
	v := []float32{-3, -0.5, 0, 0.5, 3}
	GELUTanh(v)
	for i, in := range []float64{-3, -0.5, 0, 0.5, 3} {
		w := 0.5 * in * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(in+0.044715*in*in*in)))
		if !near(float64(v[i]), w, 1e-6) {
			t.Errorf("GELUTanh(%v) = %v, want %v", in, v[i], w)
		}
	}
	e := []float32{-3, -0.5, 0, 0.5, 3}
	GELUErf(e)
	for i, in := range []float64{-3, -0.5, 0, 0.5, 3} {
		w := 0.5 * in * (1 + math.Erf(in/math.Sqrt2))
		if !near(float64(e[i]), w, 1e-6) {
			t.Errorf("GELUErf(%v) = %v, want %v", in, e[i], w)
		}
	}
	s := []float32{1000, 1001, 999}
	Softmax(s)
	z := 1 + math.E + 1/math.E
	for i, w := range []float64{1 / z, math.E / z, 1 / math.E / z} {
		if !near(float64(s[i]), w, 1e-6) {
			t.Errorf("Softmax = %v", s)
		}
	}
	if Argmax([]float32{1, 3, 3, 2}) != 1 {
		t.Error("Argmax must return the first maximum")
	}
}

// TestRoPE compares with the upstream formulation: x·cos + rotate_half(x)·sin
// with cos/sin repeat_interleave'd, rotate_half(x) = stack(-x[odd], x[even]).
func TestRoPE(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	hd, heads := 16, 3
	rp := NewRoPE(hd, 10000, 8)
	for _, pos := range []int{0, 1, 7, 8, 1000, 123457} {
		x := randVec(r, hd*heads)
		got := append([]float32(nil), x...)
		rp.Apply(got, pos)
		for h := range heads {
			for i := range hd {
				f := math.Pow(10000, -float64(2*(i/2))/float64(hd))
				c, s := math.Cos(float64(pos)*f), math.Sin(float64(pos)*f)
				var rot float64
				if i%2 == 0 {
					rot = -float64(x[h*hd+i+1])
				} else {
					rot = float64(x[h*hd+i-1])
				}
				want := float64(x[h*hd+i])*c + rot*s
				if !near(float64(got[h*hd+i]), want, 1e-5) {
					t.Fatalf("pos %d head %d i %d: %v, want %v", pos, h, i, got[h*hd+i], want)
				}
			}
		}
	}
}
