package encode

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/nanovox/nanovox/internal/audio"
)

// ffmpegPath finds ffmpeg; tests skip without it, except in CI, which
// installs it.
func ffmpegPath(t testing.TB) string {
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is required in CI")
		}
		t.Skip("ffmpeg not found")
	}
	return p
}

// decode runs ffmpeg on an encoded stream and returns float samples at
// rate with the given channels.
func decode(t *testing.T, data []byte, channels, rate int) []float32 {
	t.Helper()
	cmd := exec.Command(ffmpegPath(t), "-v", "error", "-i", "pipe:0", "-f", "f32le", "-ac", strconv.Itoa(channels), "-ar", strconv.Itoa(rate), "pipe:1")
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg: %v: %s", err, stderr.String())
	}
	b := out.Bytes()
	s := make([]float32, len(b)/4)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// modelAudio is the test input in the model's shape: 48 kHz stereo, the
// speech clip on the left and a quieter, delayed copy on the right.
func modelAudio(t *testing.T) []float32 {
	t.Helper()
	b, err := os.ReadFile("testdata/speech48k.wav")
	if err != nil {
		t.Fatal(err)
	}
	c, err := audio.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	mono := c.Samples[0]
	st := make([]float32, 0, 2*len(mono))
	for i, v := range mono {
		r := float32(0)
		if i >= 240 {
			r = 0.5 * mono[i-240]
		}
		st = append(st, v, r)
	}
	return st
}

// encodeChunks runs Output over x in random chunk sizes, as the engine
// hands audio over.
func encodeChunks(t *testing.T, o OutputOptions, x []float32, seed uint64) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	out, err := NewOutput(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < len(x); {
		n := min(len(x)-i, 2*(1+r.IntN(4000)))
		if err := out.Write(x[i : i+n]); err != nil {
			t.Fatal(err)
		}
		if err := out.Flush(); err != nil {
			t.Fatal(err)
		}
		i += n
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), out.SampleRate()
}

// expected is what the output should sound like: channels averaged (or
// kept), then resampled to rate, planar.
func expected(x []float32, channels, rate int) [][]float32 {
	var planes [][]float32
	if channels == 1 {
		planes = [][]float32{audio.Downmix(nil, x)}
	} else {
		l, r := make([]float32, 0, len(x)/2), make([]float32, 0, len(x)/2)
		for i := 0; i < len(x); i += 2 {
			l, r = append(l, x[i]), append(r, x[i+1])
		}
		planes = [][]float32{l, r}
	}
	for c := range planes {
		planes[c], _ = audio.Resample(planes[c], 48000, rate)
	}
	return planes
}

// TestOutputLossless: WAV, PCM and FLAC give back exactly the 16-bit
// quantization of the converted audio, at every rate and channel count.
func TestOutputLossless(t *testing.T) {
	x := modelAudio(t)
	for _, f := range []Format{WAV, PCM, FLAC} {
		for _, ch := range []int{1, 2} {
			for _, rate := range []int{48000, 24000, 22050, 8000} {
				data, got := encodeChunks(t, OutputOptions{Format: f, InRate: 48000, InChannels: 2, Channels: ch, SampleRate: rate}, x, uint64(rate+ch))
				if got != rate {
					t.Fatalf("%s: encoded at %d Hz, want %d", f, got, rate)
				}
				if f == PCM { // ffmpeg needs to be told what raw PCM is
					data = append(audio.AppendWAVHeader(nil, rate, ch, int64(len(data))), data...)
				}
				dec := decode(t, data, ch, rate)
				want := expected(x, ch, rate)
				if len(dec) != ch*len(want[0]) {
					t.Fatalf("%s %d ch %d Hz: %d samples decoded, want %d", f, ch, rate, len(dec), ch*len(want[0]))
				}
				for i, v := range dec {
					w := float32(audio.Quantize16(want[i%ch][i/ch])) / 32768
					if v != w {
						t.Fatalf("%s %d ch %d Hz: sample %d = %v, want %v", f, ch, rate, i, v, w)
					}
				}
			}
		}
	}
}

// TestOutputLossy: MP3, Opus and AAC decode to audio of the right rate,
// channels and length that follows the converted audio closely (after the
// codec's delay, found by cross-correlation), and a wrong signal does not.
func TestOutputLossy(t *testing.T) {
	x := modelAudio(t)
	for _, tc := range []struct {
		f        Format
		rate, ch int
		wantRate int
		maxDelay int // samples at wantRate
		extra    int // samples the decoder may add at the end (padding to a frame, delay)
		minCorr  float64
	}{
		{MP3, 48000, 1, 48000, 1200, 1152 + 1057, 0.99},
		{MP3, 24000, 2, 24000, 1200, 576 + 1057, 0.99},
		{MP3, 8000, 1, 16000, 1200, 576 + 1057, 0.99}, // no 8 kHz MP3: encoded at 16 kHz
		{Opus, 48000, 1, 48000, 50, 960, 0.98},
		{Opus, 22050, 2, 24000, 50, 960, 0.98},
		{AAC, 48000, 1, 48000, 1100, 2048, 0.99},
		{AAC, 16000, 2, 16000, 1100, 2048, 0.99},
	} {
		data, got := encodeChunks(t, OutputOptions{Format: tc.f, InRate: 48000, InChannels: 2, Channels: tc.ch, SampleRate: tc.rate}, x, 3)
		if got != tc.wantRate {
			t.Fatalf("%s at %d Hz: encoded at %d, want %d", tc.f, tc.rate, got, tc.wantRate)
		}
		dec := decode(t, data, tc.ch, got)
		want := expected(x, tc.ch, got)
		n := len(want[0])
		if d := len(dec)/tc.ch - n; d < 0 || d > tc.extra {
			t.Errorf("%s %d Hz %d ch: decoded %d samples per channel for %d (%+d)", tc.f, tc.rate, tc.ch, len(dec)/tc.ch, n, d)
		}
		for c := range tc.ch {
			ch := make([]float32, 0, len(dec)/tc.ch)
			for i := c; i < len(dec); i += tc.ch {
				ch = append(ch, dec[i])
			}
			lag, corr := bestLag(want[c], ch, tc.maxDelay)
			t.Logf("%s %d Hz ch %d: delay %d, correlation %.4f", tc.f, tc.rate, c, lag, corr)
			if corr < tc.minCorr {
				t.Errorf("%s %d Hz ch %d: correlation %.3f at delay %d, want ≥ %.2f", tc.f, tc.rate, c, corr, lag, tc.minCorr)
			}
			if tc.ch == 2 && c == 0 {
				// The channels are not swapped: the left decodes closer to
				// the left than to the right.
				if _, other := bestLag(want[1], ch, tc.maxDelay); other >= corr {
					t.Errorf("%s: left channel matches the right input better (%.3f ≥ %.3f)", tc.f, other, corr)
				}
			}
		}
	}
	// Negative control: the measure rejects a signal that is not the input.
	want := expected(x, 1, 48000)[0]
	noise := make([]float32, len(want))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = float32(r.NormFloat64() * 0.1)
	}
	if _, c := bestLag(want, noise, 1200); c > 0.2 {
		t.Fatalf("noise correlates %.3f with speech", c)
	}
}

// bestLag finds the delay (0..maxLag) that best aligns got with want and
// returns the normalized correlation there.
func bestLag(want, got []float32, maxLag int) (int, float64) {
	best, bestC := 0, -2.0
	for lag := 0; lag <= maxLag; lag++ {
		var xy, xx, yy float64
		for i := range want {
			if i+lag >= len(got) {
				break
			}
			a, b := float64(want[i]), float64(got[i+lag])
			xy += a * b
			xx += a * a
			yy += b * b
		}
		if c := xy / math.Sqrt(xx*yy+1e-30); c > bestC {
			best, bestC = lag, c
		}
	}
	return best, bestC
}

func TestFormats(t *testing.T) {
	for _, f := range Formats() {
		g, err := ParseFormat(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f, g, err)
		}
		if p, ok := FormatForPath("x" + f.Ext()); !ok || p != f {
			t.Errorf("FormatForPath(x%s) = %v, %v", f.Ext(), p, ok)
		}
	}
	for _, bad := range []string{"", "MP3", "ogg", "m4a", "wave"} {
		if _, err := ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) succeeded", bad)
		}
	}
	if f, ok := FormatForPath("a/b.OGG"); !ok || f != Opus {
		t.Errorf("FormatForPath(.OGG) = %v, %v", f, ok)
	}
	if _, ok := FormatForPath("x.txt"); ok {
		t.Error("FormatForPath(.txt) succeeded")
	}
	for _, tc := range []struct {
		f          Format
		rate, want int
	}{{MP3, 8000, 16000}, {MP3, 44100, 44100}, {Opus, 44100, 48000}, {Opus, 22050, 24000}, {AAC, 11025, 11025}, {WAV, 11111, 11111}, {FLAC, 8000, 8000}} {
		if got := tc.f.EncodeRate(tc.rate); got != tc.want {
			t.Errorf("%s.EncodeRate(%d) = %d, want %d", tc.f, tc.rate, got, tc.want)
		}
	}
}

// TestBufferPatchesWAV: a buffered WAV carries its exact sizes.
func TestBufferPatchesWAV(t *testing.T) {
	var b Buffer
	out, err := NewOutput(&b, OutputOptions{Format: WAV, InRate: 48000, InChannels: 1, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	out.Write(make([]float32, 1001))
	out.Close()
	data := b.Bytes()
	if len(data) != 44+2002 || string(data[:4]) != "RIFF" || binary.LittleEndian.Uint32(data[4:]) != uint32(len(data)-8) || binary.LittleEndian.Uint32(data[40:]) != 2002 {
		t.Fatalf("WAV of %d bytes, RIFF size %d, data size %d", len(data), binary.LittleEndian.Uint32(data[4:]), binary.LittleEndian.Uint32(data[40:]))
	}
}

func TestOutputErrors(t *testing.T) {
	for _, o := range []OutputOptions{
		{Format: WAV, InRate: 0, InChannels: 2, Channels: 1},
		{Format: WAV, InRate: 48000, InChannels: 3, Channels: 1},
		{Format: WAV, InRate: 48000, InChannels: 1, Channels: 2},
		{Format: WAV, InRate: 48000, InChannels: 2, Channels: 1, SampleRate: 7999},
		{Format: MP3, InRate: 48000, InChannels: 2, Channels: 1, SampleRate: 96000},
		{Format: Format(42), InRate: 48000, InChannels: 2, Channels: 1},
		{Format: MP3, InRate: 48000, InChannels: 2, Channels: 1, Speed: 9},
	} {
		if _, err := NewOutput(&bytes.Buffer{}, o); err == nil {
			t.Errorf("NewOutput(%+v) succeeded", o)
		}
	}
}

// TestOutputSpeed: speed changes the length by its factor and the chunked
// result equals the whole-signal one (the stretcher and resampler carry
// their state across chunks).
func TestOutputSpeed(t *testing.T) {
	x := modelAudio(t)
	for _, tc := range []struct {
		speed float64
		rate  int
	}{{1.25, 48000}, {0.5, 24000}, {4, 16000}, {0.25, 48000}} {
		o := OutputOptions{Format: PCM, InRate: 48000, InChannels: 2, Channels: 1, SampleRate: tc.rate, Speed: tc.speed}
		chunked, _ := encodeChunks(t, o, x, 9)
		var whole bytes.Buffer
		out, err := NewOutput(&whole, o)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(x)
		out.Close()
		if !bytes.Equal(chunked, whole.Bytes()) {
			t.Errorf("speed %v: chunked output differs from whole", tc.speed)
		}
		in := len(x) / 2
		stretched := int(math.Round(float64(in) / tc.speed))
		want, _ := audio.NewResampler(48000, tc.rate)
		if got := len(chunked) / 2; got != want.OutputLen(stretched) {
			t.Errorf("speed %v at %d Hz: %d samples, want %d", tc.speed, tc.rate, got, want.OutputLen(stretched))
		}
	}
}

// TestBuffer: writes past a seek overwrite and then extend; the caller's
// slice is never touched.
func TestBuffer(t *testing.T) {
	var b Buffer
	b.Write([]byte("abcdef"))
	if _, err := b.Seek(2, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 3, 16)
	copy(p, "XYZ")
	b.Write(p)
	b.Seek(0, io.SeekEnd)
	b.Write([]byte("!"))
	if got := string(b.Bytes()); got != "abXYZf!" {
		t.Fatalf("buffer %q, want abXYZf!", got)
	}
	if string(p[:cap(p)][3:6]) != "\x00\x00\x00" {
		t.Fatal("Write changed the caller's slice beyond its length")
	}
	if _, err := b.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("seek before the start succeeded")
	}
	if _, err := b.Seek(1, io.SeekEnd); err == nil {
		t.Fatal("seek past the end succeeded")
	}
}
