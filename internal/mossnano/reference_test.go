package mossnano

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/audio"
)

// torchaudioResample is a plain float64 transcription of torchaudio's
// functional.resample (sinc_interp_hann, lowpass_filter_width 6, rolloff
// 0.99): _get_sinc_resample_kernel and _apply_sinc_resample_kernel.
func torchaudioResample(x []float64, orig, new int) []float64 {
	g := gcd(orig, new)
	orig, new = orig/g, new/g
	const lw, rolloff = 6.0, 0.99
	base := math.Min(float64(orig), float64(new)) * rolloff
	width := int(math.Ceil(lw * float64(orig) / base))
	klen := 2*width + orig
	kern := make([][]float64, new)
	for p := range new {
		kern[p] = make([]float64, klen)
		for k := range klen {
			idx := float64(k-width) / float64(orig)
			t := (-float64(p)/float64(new) + idx) * base
			t = math.Max(-lw, math.Min(lw, t))
			w := math.Cos(t*math.Pi/lw/2) * math.Cos(t*math.Pi/lw/2)
			t *= math.Pi
			v := 1.0
			if t != 0 {
				v = math.Sin(t) / t
			}
			kern[p][k] = v * w * base / float64(orig)
		}
	}
	padded := make([]float64, width+len(x)+width+orig)
	copy(padded[width:], x)
	frames := (len(padded)-klen)/orig + 1
	out := make([]float64, 0, frames*new)
	for f := range frames {
		for p := range new {
			var s float64
			for k := range klen {
				s += padded[f*orig+k] * kern[p][k]
			}
			out = append(out, s)
		}
	}
	target := int(math.Ceil(float64(new) * float64(len(x)) / float64(orig)))
	return out[:target]
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// TestReferenceClipCodes shows that the real demo clips at 44.1 kHz and
// 16 kHz give the codes the reference pipeline's resampler would give: the
// clip is resampled by nanovox and by the float64 definition above, both are
// encoded with the tiny-a codec, and the codes must be identical (the
// waveforms agree within 1e-6).
func TestReferenceClipCodes(t *testing.T) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, clip := range []string{"en_2.wav", "zh_3.wav"} {
		data, err := os.ReadFile("../../testdata/real/clips/" + clip)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := audio.PrepareReference(data, audio.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := audio.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if c.Channels() != 1 || (c.SampleRate != 44100 && c.SampleRate != 16000) {
			t.Fatalf("%s: %d Hz %d ch", clip, c.SampleRate, c.Channels())
		}
		x := make([]float64, c.Frames())
		for i, v := range c.Samples[0] {
			x[i] = float64(v)
		}
		want := torchaudioResample(x, c.SampleRate, 48000)
		if len(want) != ref.Frames() {
			t.Fatalf("%s: %d resampled samples, definition gives %d", clip, ref.Frames(), len(want))
		}
		def := make([]float32, 0, 2*len(want))
		for i, v := range want {
			if d := math.Abs(float64(ref.Samples[0][i]) - v); d > 1e-6 {
				t.Fatalf("%s: sample %d differs by %g", clip, i, d)
			}
			def = append(def, float32(v), float32(v)) // mono repeated to stereo
		}
		ours, err := f.EncodeReference(context.Background(), ref.Interleaved())
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := f.EncodeReference(context.Background(), def)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(theirs.Codes, ours.Codes); diff != "" {
			t.Fatalf("%s: codes differ from the definition's (-definition +nanovox):\n%s", clip, diff)
		}
		t.Logf("%s: %d Hz → %d frames of codes, identical", clip, c.SampleRate, len(ours.Codes))
	}
}
