package audio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStreamResamplerEqualsWhole feeds signals in random piece sizes: the
// concatenated output equals Resample over the whole signal bit for bit.
func TestStreamResamplerEqualsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, rates := range [][2]int{{48000, 24000}, {48000, 16000}, {48000, 22050}, {48000, 44100}, {48000, 8000}, {24000, 48000}, {48000, 48000}, {16000, 44100}} {
		for _, n := range []int{0, 1, 7, 480, 9601, 48000} {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(math.Sin(float64(i)*0.01)*0.5 + r.Float64()*0.1)
			}
			rs, err := NewResampler(rates[0], rates[1])
			if err != nil {
				t.Fatal(err)
			}
			want := rs.Resample(nil, src)
			for _, maxPiece := range []int{1, 13, 960, 20000} {
				s := NewStreamResampler(rs)
				var got []float32
				for i := 0; i < n; {
					m := min(n-i, 1+r.IntN(maxPiece))
					got = s.Process(got, src[i:i+m])
					i += m
				}
				got = s.Flush(got)
				if len(got) != len(want) {
					t.Fatalf("%v n=%d pieces≤%d: %d samples, want %d", rates, n, maxPiece, len(got), len(want))
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v n=%d pieces≤%d: sample %d = %v, want %v", rates, n, maxPiece, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestStreamResamplerLatency: after a piece, everything but the kernel's
// half width has been released.
func TestStreamResamplerLatency(t *testing.T) {
	rs, _ := NewResampler(48000, 24000)
	s := NewStreamResampler(rs)
	out := s.Process(nil, make([]float32, 4800))
	if missing := 2400 - len(out); missing < 0 || missing > 16 {
		t.Fatalf("after 100 ms of input, %d of 2400 outputs are held back", missing)
	}
}
