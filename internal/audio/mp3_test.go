package audio

import (
	"bytes"
	"math"
	"testing"
)

// goertzel returns the power of x at frequency f (Hz) at rate.
func goertzel(x []float32, f float64, rate int) float64 {
	w := 2 * math.Pi * f / float64(rate)
	c := 2 * math.Cos(w)
	var s1, s2 float64
	for _, v := range x {
		s1, s2 = float64(v)+c*s1-s2, s1
	}
	return (s1*s1 + s2*s2 - c*s1*s2) / float64(len(x)*len(x))
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func TestDecodeMP3Fixtures(t *testing.T) {
	for _, f := range mp3Fixtures {
		t.Run(f.file, func(t *testing.T) {
			b := readTestdata(t, "testdata/"+f.file)
			if f.id3 != bytes.HasPrefix(b, []byte("ID3")) {
				t.Fatalf("fixture ID3 tag presence is not %v", f.id3)
			}
			clip, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			perFrame := 1152
			if f.rate < 32000 {
				perFrame = 576 // MPEG-2 layer III
			}
			if clip.SampleRate != f.rate || clip.Channels() != f.channels || clip.Frames()%perFrame != 0 {
				t.Fatalf("got %d Hz × %d ch × %d frames (%q)", clip.SampleRate, clip.Channels(), clip.Frames(), clip.Format)
			}
			// The content is one second; LAME's delay and padding add up to
			// a few frames, which go-mp3 does not trim.
			if d := clip.Frames() - f.rate; d < 0 || d > 4*perFrame {
				t.Errorf("frames = %d for a %d-frame input", clip.Frames(), f.rate)
			}
			for c, freq := range f.freqs {
				mid := clip.Samples[c][f.rate/4 : 3*f.rate/4]
				if r := rms(mid); math.Abs(r-0.5/math.Sqrt2) > 0.02 {
					t.Errorf("channel %d: rms %.4f, want ≈ %.4f", c, r, 0.5/math.Sqrt2)
				}
				on := goertzel(mid, freq, f.rate)
				for _, other := range []float64{freq * 1.5, freq * 2, 3000, 220} {
					if off := goertzel(mid, other, f.rate); on < 1e4*off {
						t.Errorf("channel %d: power at %g Hz %.3g is not ≫ power at %g Hz %.3g", c, freq, on, other, off)
					}
				}
			}
		})
	}
}

func TestDecodeMP3Edges(t *testing.T) {
	mono := readTestdata(t, "testdata/"+mp3Fixtures[0].file)
	full, err := DecodeWith(mono, noMin)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("truncated", func(t *testing.T) {
		clip, err := DecodeWith(mono[:len(mono)/2], noMin)
		if err != nil {
			t.Fatal(err)
		}
		if n := clip.Frames(); n == 0 || n >= full.Frames() {
			t.Errorf("frames = %d of %d", n, full.Frames())
		}
	})
	t.Run("garbage after a valid header", func(t *testing.T) {
		b := append(bytes.Clone(mono[:4]), bytes.Repeat([]byte{0x5A, 0xFF, 0x00, 0xFB}, 500)...)
		b = append(b, mono[:4]...) // so sniffing is not the thing that rejects it
		clip, err := DecodeWith(b, noMin)
		if err == nil {
			if clip.Frames() == 0 {
				t.Fatal("accepted with no frames")
			}
			return // the decoder made something of it: fine, no panic
		}
		var aerr *Error
		if !asError(err, &aerr) {
			t.Fatalf("error %v is not an *Error", err)
		}
	})
	t.Run("too long", func(t *testing.T) {
		_, err := DecodeWith(mono, Options{MinDuration: -1, MaxDuration: 5e8})
		checkAudioError(t, nil, err, KindDuration, "ref_audio is longer than 0.5 s; must be at most 0.5 s")
	})
	t.Run("layer II", func(t *testing.T) {
		h := []byte{0xFF, 0xFD, 0x90, 0x04} // MPEG-1 layer II, 128 kbit/s, 44.1 kHz
		hd, ok := parseMP3Header(h)
		if !ok || hd.layer != 2 {
			t.Fatalf("test header parses as %+v %v", hd, ok)
		}
		b := append(append(bytes.Clone(h), make([]byte, hd.frameSize-4)...), h...)
		_, err := Decode(b)
		checkAudioError(t, nil, err, KindUnsupported, "ref_audio is MPEG layer 2 audio; only MP3 (layer III) is supported")
	})
}

func TestParseMP3Header(t *testing.T) {
	tests := []struct {
		h    []byte
		ok   bool
		want mp3Header
	}{
		{[]byte{0xFF, 0xFB, 0x90, 0xC4}, true, mp3Header{layer: 3, rate: 44100, mono: true, frameSize: 417}},
		{[]byte{0xFF, 0xFB, 0x92, 0x04}, true, mp3Header{layer: 3, rate: 44100, frameSize: 418}},
		{[]byte{0xFF, 0xF3, 0x80, 0x44}, true, mp3Header{layer: 3, rate: 22050, frameSize: 208}},
		{[]byte{0xFF, 0xE3, 0x80, 0x44}, true, mp3Header{layer: 3, rate: 11025, frameSize: 417}},
		{[]byte{0xFF, 0xFB, 0x00, 0x00}, false, mp3Header{}}, // free format
		{[]byte{0xFF, 0xFB, 0xF0, 0x00}, false, mp3Header{}}, // bad bitrate
		{[]byte{0xFF, 0xFB, 0x9C, 0x00}, false, mp3Header{}}, // reserved rate
		{[]byte{0xFF, 0xEB, 0x90, 0x00}, false, mp3Header{}}, // reserved version
		{[]byte{0xFF, 0xF9, 0x90, 0x00}, false, mp3Header{}}, // reserved layer
		{[]byte{0xFF, 0xFB, 0x90, 0x02}, false, mp3Header{}}, // reserved emphasis
		{[]byte{0xFF, 0xFB, 0x90}, false, mp3Header{}},
	}
	for _, tc := range tests {
		got, ok := parseMP3Header(tc.h)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseMP3Header(% x) = %+v, %v; want %+v, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}
