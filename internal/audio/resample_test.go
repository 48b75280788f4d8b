package audio

import (
	"math"
	"testing"
)

// torchaudioResample is torchaudio.functional.resample written out plainly
// in float64, straight from _get_sinc_resample_kernel and
// _apply_sinc_resample_kernel: the full [new][2·width+orig] kernel
// (clamped taps included), zero padding of width before and width+orig
// after, a strided convolution, and truncation to ceil(new·n/orig).
//
// Comparing Resampler against it is how we show that the reference clips
// (44.1 kHz and 16 kHz) produce what the reference resampler would: the only
// differences allowed are our float32 kernel and float32 output rounding.
func torchaudioResample(x []float32, inRate, outRate int) []float64 {
	g := gcd(inRate, outRate)
	orig, nw := inRate/g, outRate/g
	const lpw = 6.0
	base := math.Min(float64(orig), float64(nw)) * 0.99
	width := int(math.Ceil(lpw * float64(orig) / base))
	size := 2*width + orig
	kernel := make([][]float64, nw)
	for j := range kernel {
		kernel[j] = make([]float64, size)
		for p := range kernel[j] {
			idx := float64(p - width)
			t := (-float64(j)/float64(nw) + idx/float64(orig)) * base
			t = math.Max(-lpw, math.Min(lpw, t))
			window := math.Pow(math.Cos(t*math.Pi/lpw/2), 2)
			t *= math.Pi
			k := 1.0
			if t != 0 {
				k = math.Sin(t) / t
			}
			kernel[j][p] = k * window * base / float64(orig)
		}
	}
	padded := make([]float64, width+len(x)+width+orig)
	for i, v := range x {
		padded[width+i] = float64(v)
	}
	var out []float64
	for f := 0; f*orig+size <= len(padded); f++ {
		for j := 0; j < nw; j++ {
			var acc float64
			for p := 0; p < size; p++ {
				acc += padded[f*orig+p] * kernel[j][p]
			}
			out = append(out, acc)
		}
	}
	target := int(math.Ceil(float64(nw) * float64(len(x)) / float64(orig)))
	return out[:target]
}

func noise(n int, seed uint32) []float32 {
	s := make([]float32, n)
	for i := range s {
		seed = seed*1664525 + 1013904223
		s[i] = float32(int32(seed))/(1<<31)*0.9 + 0.05*float32(math.Sin(float64(i)/7))
	}
	return s
}

func TestResampleMatchesTorchaudioDefinition(t *testing.T) {
	en2, err := Decode(readTestdata(t, "../../testdata/real/clips/en_2.wav"))
	if err != nil {
		t.Fatal(err)
	}
	zh3, err := Decode(readTestdata(t, "../../testdata/real/clips/zh_3.wav"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		x       []float32
		in, out int
	}{
		{"en_2 44.1k→48k", en2.Samples[0], 44100, 48000},
		{"zh_3 16k→48k", zh3.Samples[0], 16000, 48000},
		{"noise 44.1k→48k", noise(5000, 1), 44100, 48000},
		{"noise 16k→48k", noise(3001, 2), 16000, 48000},
		{"noise 22.05k→48k", noise(2205, 3), 22050, 48000},
		{"noise 11.025k→48k", noise(1103, 4), 11025, 48000},
		{"noise 24k→48k", noise(999, 5), 24000, 48000},
		{"noise 8k→48k", noise(800, 6), 8000, 48000},
		{"noise 96k→48k", noise(9601, 7), 96000, 48000},
		{"noise 192k→48k", noise(19201, 8), 192000, 48000},
		{"noise 48k→44.1k", noise(4801, 9), 48000, 44100},
		{"noise 44.1k→16k", noise(4410, 10), 44100, 16000},
		{"noise 7→11 (odd ratio)", noise(300, 11), 7, 11},
		{"short input", noise(3, 12), 44100, 48000},
		{"one sample", noise(1, 13), 16000, 48000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resample(tc.x, tc.in, tc.out)
			if err != nil {
				t.Fatal(err)
			}
			want := torchaudioResample(tc.x, tc.in, tc.out)
			if len(got) != len(want) {
				t.Fatalf("len %d, want %d", len(got), len(want))
			}
			worst, at := 0.0, 0
			for i := range got {
				if d := math.Abs(float64(got[i]) - want[i]); d > worst {
					worst, at = d, i
				}
			}
			if worst > 1e-6 {
				t.Errorf("max |fast - reference| = %.3g at %d (got %v, want %v)", worst, at, got[at], want[at])
			}
		})
	}
}

// TestResampleSineSNR measures a 1 kHz sine taken from 44.1 to 48 kHz
// against the analytic sine. torchaudio's default filter (Hann window, 6
// zero crossings, rolloff 0.99) is not a 90 dB design: its per-phase DC gain
// ranges over 1.00004–1.00088 for 44.1→48 kHz, which caps the SNR near
// 69 dB at 1 kHz (65 dB at 100 Hz). Matching torchaudio matters more than
// beating it, so the test asserts the algorithm's own figure: our SNR must
// equal the plain float64 definition's to 0.01 dB, and exceed 65 dB.
func TestResampleSineSNR(t *testing.T) {
	const (
		in, out = 44100, 48000
		f, amp  = 1000.0, 0.5
	)
	x := sine(in, f, in, amp) // one second
	y, err := Resample(x, in, out)
	if err != nil {
		t.Fatal(err)
	}
	ref := torchaudioResample(x, in, out)
	// Output m depends on inputs within ±width of m·in/out; skip outputs
	// whose support reaches the zero padding.
	edge := int(math.Ceil(8 * float64(out) / in))
	var sig, errFast, errRef float64
	for m := edge; m < len(y)-edge; m++ {
		s := amp * math.Sin(2*math.Pi*f*float64(m)/out)
		sig += s * s
		errFast += (float64(y[m]) - s) * (float64(y[m]) - s)
		errRef += (ref[m] - s) * (ref[m] - s)
	}
	snr, snrRef := 10*math.Log10(sig/errFast), 10*math.Log10(sig/errRef)
	t.Logf("SNR %.2f dB (float64 torchaudio definition: %.2f dB)", snr, snrRef)
	if snr < 65 || math.Abs(snr-snrRef) > 0.01 {
		t.Errorf("SNR %.2f dB, want > 65 dB and equal to the definition's %.2f dB", snr, snrRef)
	}
}

func TestResampleLength(t *testing.T) {
	rates := []int{8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 96000, 192000}
	lengths := []int{0, 1, 2, 3, 7, 147, 160, 441, 999, 44099, 44100, 44101, 1234567}
	for _, rate := range rates {
		r, err := NewResampler(rate, 48000)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range lengths {
			// torchaudio: ceil(new_freq * length / orig_freq) in Python floats.
			want := int(math.Ceil(48000 * float64(n) / float64(rate)))
			if got := r.OutputLen(n); got != want {
				t.Errorf("%d Hz, n=%d: OutputLen %d, want %d", rate, n, got, want)
			}
			if n < 50000 {
				if got := len(r.Resample(nil, make([]float32, n))); got != want {
					t.Errorf("%d Hz, n=%d: len(Resample) %d, want %d", rate, n, got, want)
				}
			}
		}
	}
}

func TestResampleRoundTrip(t *testing.T) {
	// Whole seconds come back to the same length (for lengths that are not
	// a multiple of in/gcd, ceil on each leg can add a sample), and a
	// band-limited signal survives within the filters' passband ripple.
	x := sine(2*48000, 440, 48000, 0.5)
	for _, rate := range []int{16000, 22050, 24000, 44100, 96000} {
		mid, err := Resample(x, 48000, rate)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Resample(mid, rate, 48000)
		if err != nil {
			t.Fatal(err)
		}
		if len(mid) != 2*rate || len(back) != len(x) {
			t.Fatalf("%d Hz: lengths %d → %d → %d", rate, len(x), len(mid), len(back))
		}
		var sig, e float64
		for i := 1000; i < len(x)-1000; i++ {
			sig += float64(x[i]) * float64(x[i])
			d := float64(back[i] - x[i])
			e += d * d
		}
		if snr := 10 * math.Log10(sig/e); snr < 58 { // two passes of the ~65 dB filter
			t.Errorf("%d Hz round trip SNR %.1f dB, want > 58", rate, snr)
		}
	}
}

func TestResampleEqualRatesCopies(t *testing.T) {
	x := noise(100, 1)
	y, err := Resample(x, 48000, 48000)
	if err != nil {
		t.Fatal(err)
	}
	if len(y) != len(x) || y[5] != x[5] {
		t.Fatal("equal rates did not return the input")
	}
	y[5] = 42
	if x[5] == 42 {
		t.Error("output aliases the input")
	}
}

func TestResampleAppends(t *testing.T) {
	r, err := NewResampler(16000, 48000)
	if err != nil {
		t.Fatal(err)
	}
	x := noise(160, 3)
	whole := r.Resample(nil, x)
	prefixed := r.Resample([]float32{7, 8}, x)
	if len(prefixed) != 2+len(whole) || prefixed[0] != 7 || prefixed[1] != 8 {
		t.Fatalf("prefix lost: %v", prefixed[:2])
	}
	for i := range whole {
		if prefixed[2+i] != whole[i] {
			t.Fatalf("sample %d differs", i)
		}
	}
}

func TestNewResamplerErrors(t *testing.T) {
	for _, r := range [][2]int{{0, 48000}, {48000, 0}, {-1, 48000}, {1 << 25, 48000}} {
		if _, err := NewResampler(r[0], r[1]); err == nil {
			t.Errorf("NewResampler(%d, %d): no error", r[0], r[1])
		}
	}
}

func BenchmarkResample30s44k(b *testing.B) {
	x := noise(30*44100, 1)
	r, err := NewResampler(44100, 48000)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, 0, r.OutputLen(len(x)))
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		dst = r.Resample(dst[:0], x)
	}
}

func BenchmarkResample30s16k(b *testing.B) {
	x := noise(30*16000, 1)
	r, err := NewResampler(16000, 48000)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, 0, r.OutputLen(len(x)))
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		dst = r.Resample(dst[:0], x)
	}
}

func BenchmarkNewResampler(b *testing.B) {
	for _, rate := range []int{44100, 22050, 44101} {
		b.Run(itoa(rate), func(b *testing.B) {
			for b.Loop() {
				if _, err := NewResampler(rate, 48000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeResample10s is the reference-clip path for a 10 s 44.1 kHz
// mono PCM16 WAV: decode, validate, resample to 48 kHz stereo.
func BenchmarkDecodeResample10s(b *testing.B) {
	wav := simpleWAV(44100, 1, ramp16(10*44100))
	b.SetBytes(int64(len(wav)))
	for b.Loop() {
		if _, err := PrepareReference(wav, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFLAC(b *testing.B) {
	data := readTestdata(b, "../../testdata/real/clips/en_6.wav")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
