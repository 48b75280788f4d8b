package aac

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Quality thresholds (segmental SNR in dB, see segSNR) for speech after
// delay alignment. Measured on the test clips at the time of writing:
// en_2 mono 32/64/128 kbit/s ≈ 17.5/25.2/30.1 dB, jp_2 ≈ 15.1/21.8 dB; a
// signal at half the amplitude scores 6 dB, one frame off ≈ 0 dB.
const (
	minSNR32k  = 11
	minSNR64k  = 17
	minSNR128k = 24
)

// sweep returns a logarithmic sine sweep from f0 to f1 Hz, amplitude 0.5.
func sweep(rate int, seconds, f0, f1 float64) []float32 {
	n := int(seconds * float64(rate))
	x := make([]float32, n)
	k := math.Log(f1 / f0)
	for i := range x {
		tt := float64(i) / float64(rate)
		phase := 2 * math.Pi * f0 * seconds / k * (math.Exp(tt/seconds*k) - 1)
		x[i] = float32(0.5 * math.Sin(phase))
	}
	return x
}

// interleave builds a stereo signal from two mono ones (the shorter padded
// with silence).
func interleave(l, r []float32) []float32 {
	n := max(len(l), len(r))
	x := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		if i < len(l) {
			x[2*i] = l[i]
		}
		if i < len(r) {
			x[2*i+1] = r[i]
		}
	}
	return x
}

// TestRoundTrip encodes speech and sweeps, decodes them with ffmpeg and checks
// the length, the delay (by cross-correlation) and the segmental SNR of each
// channel after alignment. Streams of one rate and channel count are decoded
// by one ffmpeg run; the cases marked long run with NANOVOX_LONG_TESTS=1.
func TestRoundTrip(t *testing.T) {
	en := loadS16(t, "en_2_48k_3s.s16")
	jp := loadS16(t, "jp_2_48k_2.5s.s16")
	tests := []struct {
		name     string
		x        []float32 // interleaved
		rate     int
		channels int
		bitrate  int
		minSNR   float64
		long     bool
	}{
		{"speech mono 64k default", en, 48000, 1, 0, minSNR64k, false},
		{"speech mono 32k", en, 48000, 1, 32000, minSNR32k, false},
		{"speech mono 128k", en, 48000, 1, 128000, minSNR128k, false},
		{"speech jp mono 64k", jp, 48000, 1, 64000, minSNR64k - 2, false},
		{"sweep 48k", sweep(48000, 2, 50, 12000), 48000, 1, 0, 15, false},
		{"speech stereo 128k default", interleave(en, jp), 48000, 2, 0, minSNR64k - 2, false},
		{"speech stereo 64k", interleave(en, jp), 48000, 2, 64000, minSNR32k - 2, false},
		{"sweep 44.1k", sweep(44100, 2, 50, 12000), 44100, 1, 0, 15, false},
		{"sweep 32k", sweep(32000, 2, 50, 12000), 32000, 1, 0, 15, false},
		{"sweep 24k", sweep(24000, 2, 50, 10000), 24000, 1, 0, 15, false},
		{"sweep 22.05k", sweep(22050, 2, 50, 10000), 22050, 1, 0, 15, false},
		{"sweep 16k low rate", sweep(16000, 2, 50, 7000), 16000, 1, 24000, 12, false},
		{"sweep 16k high rate", sweep(16000, 2, 50, 7000), 16000, 1, 96000, 25, false},
		{"sweep 8k", sweep(8000, 2, 50, 3500), 8000, 1, 0, 15, true},
		{"sweep 96k", sweep(96000, 1, 50, 15000), 96000, 1, 0, 15, true},
		{"sweep 11.025k", sweep(11025, 2, 50, 5000), 11025, 1, 0, 15, true},
		{"sweep stereo 44.1k", interleave(sweep(44100, 2, 50, 10000), sweep(44100, 2, 10000, 50)), 44100, 2, 0, 15, true},
	}
	long := os.Getenv("NANOVOX_LONG_TESTS") != ""
	streams := make([][]byte, len(tests))
	decoded := make([][]float32, len(tests))
	groups := map[[2]int][]int{}
	var keys [][2]int
	for i, tt := range tests {
		if tt.long && !long {
			continue
		}
		streams[i] = encodeAll(t, tt.x, tt.rate, tt.channels, tt.bitrate, 4800)
		k := [2]int{tt.rate, tt.channels}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range keys {
		var batch [][]byte
		for _, i := range groups[k] {
			batch = append(batch, streams[i])
		}
		for j, d := range decodeBatch(t, batch, k[0], k[1]) {
			decoded[groups[k][j]] = d
		}
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long && !long {
				t.Skip("long test; set NANOVOX_LONG_TESTS=1")
			}
			stream, dec := streams[i], decoded[i]
			n := len(tt.x) / tt.channels
			got := len(dec) / tt.channels
			if want := (n+frameLen-1)/frameLen*frameLen + Delay; got != want {
				t.Errorf("decoded %d samples per channel, want %d (input %d + delay %d + padding)", got, want, n, Delay)
			}
			seconds := float64(n) / float64(tt.rate)
			kbps := float64(len(stream)) * 8 / seconds / 1000
			for ch := 0; ch < tt.channels; ch++ {
				ref := channelOf(tt.x, tt.channels, ch)
				out := channelOf(dec, tt.channels, ch)
				if lag := bestLag(ref, out, 3*frameLen); lag != Delay {
					t.Errorf("channel %d: cross-correlation lag %d, want Delay = %d", ch, lag, Delay)
				}
				snr := segSNR(ref, out[Delay:], tt.rate)
				t.Logf("channel %d: segmental SNR %.2f dB at %.1f kbit/s", ch, snr, kbps)
				if !(snr >= tt.minSNR) {
					t.Errorf("channel %d: segmental SNR %.2f dB < %.1f dB", ch, snr, tt.minSNR)
				}
				if tt.channels == 2 {
					other := channelOf(tt.x, 2, 1-ch)
					if swapped := segSNR(other, out[Delay:], tt.rate); swapped > 3 {
						t.Errorf("channel %d resembles the other input channel (%.1f dB)", ch, swapped)
					}
				}
			}
			want := tt.bitrate
			if want == 0 {
				_, hi := BitrateRange(tt.rate, tt.channels)
				want = min(DefaultBitrateMono*tt.channels, hi)
			}
			// Frames may undershoot (silence, inaudible bands) but the rate
			// loop never spends more than the target on average. kbps counts
			// the two padded frames against the input's duration.
			if limit := float64(want) / 1000 * (1 + 2*frameLen/float64(n)); kbps > limit {
				t.Errorf("%.1f kbit/s exceeds target %d", kbps, want)
			}
		})
	}
}

// TestQualityMeasureRejectsDamage is the negative control: the decoded
// default-rate speech passes minSNR64k, and each kind of damage an encoder
// bug would cause fails it.
func TestQualityMeasureRejectsDamage(t *testing.T) {
	en := loadS16(t, "en_2_48k_3s.s16")
	dec := decodeFFmpeg(t, encodeAll(t, en, 48000, 1, 0, 4800), 48000, 1)
	aligned := dec[Delay:]
	if snr := segSNR(en, aligned, 48000); snr < minSNR64k {
		t.Fatalf("undamaged signal scores %.2f dB < %d", snr, minSNR64k)
	}
	scaled := make([]float32, len(aligned))
	for i, v := range aligned {
		scaled[i] = v * 0.5
	}
	dropped := append(append([]float32{}, aligned[:len(aligned)/2]...), aligned[len(aligned)/2+frameLen:]...)
	inverted := make([]float32, len(aligned))
	for i, v := range aligned {
		inverted[i] = -v
	}
	silentFrames := append([]float32{}, aligned...)
	for i := 0; i+frameLen <= len(silentFrames); i += 4 * frameLen {
		clear(silentFrames[i : i+frameLen])
	}
	damaged := []struct {
		name string
		dec  []float32
	}{
		{"one frame late", dec[Delay+frameLen:]},
		{"one frame early", append(make([]float32, frameLen), aligned...)},
		{"no delay compensation", dec},
		{"half amplitude", scaled},
		{"inverted", inverted},
		{"frame dropped mid-stream", dropped},
		{"every fourth frame silent", silentFrames},
		{"other clip", loadS16(t, "jp_2_48k_2.5s.s16")},
	}
	for _, d := range damaged {
		snr := segSNR(en, d.dec, 48000)
		t.Logf("%s: %.2f dB", d.name, snr)
		if snr >= minSNR64k {
			t.Errorf("%s scores %.2f dB ≥ threshold %d: the measure does not reject it", d.name, snr, minSNR64k)
		}
	}
}

// TestForcedBooks restricts the encoder to one spectral book (plus book 11
// where it cannot code a band) so that every codebook, its index order and
// its sign handling are checked by a real decoder. At 256 kbit/s the bit
// budget never binds on this speech, so every book must carry the same
// quantized values and ffmpeg must decode identical samples.
func TestForcedBooks(t *testing.T) {
	en := loadS16(t, "en_2_48k_3s.s16")[:48000]
	var streams [][]byte
	for cb := 1; cb <= 11; cb++ {
		var buf bytes.Buffer
		e, err := NewEncoder(&buf, 48000, 1, 256000)
		if err != nil {
			t.Fatal(err)
		}
		e.chans[0].onlyBook = cb
		if err := e.Write(en); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if use := e.chans[0].bookUse[cb]; use < 20 {
			t.Errorf("book %d coded only %d bands", cb, use)
		}
		streams = append(streams, buf.Bytes())
	}
	decoded := decodeBatch(t, streams, 48000, 1)
	ref := decoded[len(decoded)-1][Delay:] // book 11 alone
	if snr := segSNR(en, ref, 48000); snr < minSNR128k {
		t.Errorf("book 11: segmental SNR %.2f dB", snr)
	}
	for i, dec := range decoded {
		if !slices.Equal(dec[Delay:], ref) {
			t.Errorf("book %d: decoded samples differ from book 11's (segmental SNR %.2f dB)", i+1, segSNR(en, dec[Delay:], 48000))
		}
	}
}

// TestStreaming checks that frames are written as soon as they are complete,
// that the bytes do not depend on how the input is chunked, that each prefix
// written so far is a sequence of whole ADTS frames, and that concatenated
// streams decode to the concatenated lengths.
func TestStreaming(t *testing.T) {
	en := loadS16(t, "en_2_48k_3s.s16")
	short := en[:20000]
	ref := encodeAll(t, short, 48000, 1, 0, len(short))
	for _, chunk := range []int{1, 441, 1024, 4800} {
		if got := encodeAll(t, short, 48000, 1, 0, chunk); !bytes.Equal(got, ref) {
			t.Errorf("chunk %d: stream differs from one-shot encoding", chunk)
		}
	}

	var buf bytes.Buffer
	e, err := NewEncoder(&buf, 48000, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := interleave(en, en)
	for k := 1; k <= 5; k++ {
		if err := e.Write(x[(k-1)*2*frameLen : k*2*frameLen]); err != nil {
			t.Fatal(err)
		}
		frames := parseADTS(t, buf.Bytes(), 3, 2)
		if frames != k {
			t.Fatalf("after %d frames of input, %d ADTS frames written", k, frames)
		}
	}
	if err := e.Write(x[5*2*frameLen : 5*2*frameLen+200]); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if frames := parseADTS(t, buf.Bytes(), 3, 2); frames != 7 {
		t.Fatalf("after Close: %d frames, want 7", frames)
	}
	dec := decodeFFmpeg(t, buf.Bytes(), 48000, 2)
	if len(dec) != 7*frameLen*2 {
		t.Errorf("decoded %d samples, want %d", len(dec), 7*frameLen*2)
	}

	// Concatenated streams: decodeBatch checks the total length, the
	// second part must still match its input.
	a := encodeAll(t, en[:20000], 48000, 1, 0, 4800)
	b := encodeAll(t, en[20000:], 48000, 1, 0, 4800)
	parts := decodeBatch(t, [][]byte{a, b}, 48000, 1)
	if snr := segSNR(en[20000:], parts[1][Delay:], 48000); snr < minSNR64k {
		t.Errorf("second of two concatenated streams: segmental SNR %.2f dB", snr)
	}
}

// parseADTS checks that s is a sequence of whole AAC-LC ADTS frames with the
// given sampling_frequency_index and channel configuration, no CRC and
// buffer fullness 0x7FF, and returns their number.
func parseADTS(t *testing.T, s []byte, rateIdx, channels int) int {
	t.Helper()
	n := 0
	for len(s) > 0 {
		if len(s) < 7 {
			t.Fatalf("frame %d: %d trailing bytes", n, len(s))
		}
		h := uint64(0)
		for _, c := range s[:7] {
			h = h<<8 | uint64(c)
		}
		field := func(shift, bits uint) int { return int(h >> (56 - shift - bits) & (1<<bits - 1)) }
		if field(0, 12) != 0xFFF || field(12, 1) != 0 || field(13, 2) != 0 || field(15, 1) != 1 {
			t.Fatalf("frame %d: bad sync/ID/layer/protection %014x", n, h)
		}
		if field(16, 2) != 1 || field(18, 4) != rateIdx || field(23, 3) != channels {
			t.Fatalf("frame %d: profile %d rate index %d channels %d", n, field(16, 2), field(18, 4), field(23, 3))
		}
		if field(43, 11) != 0x7FF || field(54, 2) != 0 {
			t.Fatalf("frame %d: buffer fullness %#x, blocks %d", n, field(43, 11), field(54, 2))
		}
		size := field(30, 13)
		if size < 7 || size > len(s) {
			t.Fatalf("frame %d: length %d, %d bytes left", n, size, len(s))
		}
		s = s[size:]
		n++
	}
	return n
}

// TestFFprobe checks what ffprobe makes of the stream.
func TestFFprobe(t *testing.T) {
	ffmpegPath(t)
	probe, err := exec.LookPath("ffprobe")
	if err != nil {
		t.Skip("ffprobe not found")
	}
	for _, tt := range []struct {
		rate, channels int
		want           string
	}{{22050, 2, "aac,LC,22050,2"}} {
		x := sweep(tt.rate, 0.5, 100, 5000)
		if tt.channels == 2 {
			x = interleave(x, x)
		}
		path := t.TempDir() + "/a.aac"
		if err := writeFile(path, encodeAll(t, x, tt.rate, tt.channels, 0, 4800)); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(probe, "-v", "error", "-show_entries", "stream=codec_name,profile,sample_rate,channels", "-of", "csv=p=0", path).CombinedOutput()
		if err != nil {
			t.Fatalf("ffprobe: %v: %s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("ffprobe: %q, want %q", got, tt.want)
		}
	}
}

// TestHostileInput feeds noise, silence, full-scale square waves, NaN, ±Inf
// and out-of-range values; nothing may panic and ffmpeg must decode the
// result. NaN must encode like silence and +Inf like +1.
func TestHostileInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 3 * frameLen
	gen := map[string]func(i int) float32{
		"noise":       func(int) float32 { return rng.Float32()*2 - 1 },
		"silence":     func(int) float32 { return 0 },
		"square":      func(i int) float32 { return float32(1 - 2*(i/20%2)) },
		"nan":         func(int) float32 { return float32(math.NaN()) },
		"inf":         func(i int) float32 { return float32(math.Inf(1 - 2*(i%2))) },
		"huge":        func(i int) float32 { return float32(1e30 * float64(1-2*(i/7%2))) },
		"tiny":        func(i int) float32 { return 1e-40 * float32(i%3) },
		"clicks":      func(i int) float32 { return float32(b2f(i%1500 == 0)) },
		"dc":          func(int) float32 { return 1 },
		"noise burst": func(i int) float32 { return float32(b2f(i > n/2)) * (rng.Float32()*2 - 1) },
	}
	configs := [][2]int{{48000, 1}, {8000, 2}}
	if os.Getenv("NANOVOX_LONG_TESTS") != "" {
		configs = append(configs, [2]int{8000, 1}, [2]int{48000, 2}, [2]int{22050, 2})
	}
	for _, cfg := range configs {
		rate, channels := cfg[0], cfg[1]
		var streams [][]byte
		for name, f := range gen {
			x := make([]float32, n*channels)
			for i := range x {
				x[i] = f(i)
			}
			stream := encodeAll(t, x, rate, channels, 0, 1000)
			if parseADTS(t, stream, rateIndex(rate), channels) != 4 {
				t.Errorf("%s: wrong frame count", name)
			}
			streams = append(streams, stream)
		}
		decodeBatch(t, streams, rate, channels) // no ffmpeg error, 1024 samples per frame
	}
	mk := func(v float32) []float32 {
		x := make([]float32, 2*frameLen)
		for i := range x {
			x[i] = v
		}
		return x
	}
	if a, b := encodeAll(t, mk(float32(math.NaN())), 48000, 1, 0, 999), encodeAll(t, mk(0), 48000, 1, 0, 999); !bytes.Equal(a, b) {
		t.Error("NaN input does not encode like silence")
	}
	if a, b := encodeAll(t, mk(float32(math.Inf(1))), 48000, 1, 0, 999), encodeAll(t, mk(1), 48000, 1, 0, 999); !bytes.Equal(a, b) {
		t.Error("+Inf input does not encode like +1")
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestBitrate checks that the average rate on noise, which can use every bit,
// is close to the target and never above it.
func TestBitrate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []struct{ rate, channels, bitrate int }{
		{48000, 1, 64000}, {48000, 2, 128000}, {44100, 1, 32000}, {16000, 1, 48000}, {48000, 1, 256000},
		{96000, 2, 24000}, {8000, 1, 8000}, // the lowest rates allowed
	} {
		x := make([]float32, 2*tt.rate*tt.channels)
		for i := range x {
			x[i] = 0.3 * (rng.Float32()*2 - 1)
		}
		var buf bytes.Buffer
		e, err := NewEncoder(&buf, tt.rate, tt.channels, tt.bitrate)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Write(x); err != nil {
			t.Fatal(err)
		}
		frames := len(x) / tt.channels / frameLen
		got := float64(buf.Len()) * 8 / (float64(frames*frameLen) / float64(tt.rate))
		t.Logf("%+v: %.0f bit/s", tt, got)
		if got > float64(tt.bitrate) || got < 0.9*float64(tt.bitrate) {
			t.Errorf("%+v: %.0f bit/s, want within 90–100 %% of target", tt, got)
		}
	}
}

// TestArguments checks that unsupported arguments are errors, not panics.
func TestArguments(t *testing.T) {
	bad := []struct{ rate, channels, bitrate int }{
		{44000, 1, 0}, {7350, 1, 0}, {0, 1, 0}, {-48000, 1, 0}, {48000, 0, 0}, {48000, 3, 0},
		{48000, 1, 7999}, {48000, 1, 300000}, {48000, 2, 15000}, {8000, 1, 48001}, {48000, 1, -1},
		{96000, 1, 11999},
	}
	for _, b := range bad {
		if _, err := NewEncoder(io.Discard, b.rate, b.channels, b.bitrate); err == nil {
			t.Errorf("NewEncoder(%d, %d, %d): no error", b.rate, b.channels, b.bitrate)
		}
	}
	for _, r := range []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000} {
		if !SupportedRate(r) {
			t.Errorf("SupportedRate(%d) = false", r)
		}
		if _, err := NewEncoder(io.Discard, r, 2, 0); err != nil {
			t.Errorf("NewEncoder(%d, 2, 0): %v", r, err)
		}
	}
	e, err := NewEncoder(io.Discard, 48000, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(make([]float32, 3)); err == nil {
		t.Error("odd sample count for stereo: no error")
	}
	if e.Delay() != 1024 {
		t.Errorf("Delay() = %d", e.Delay())
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(make([]float32, 2)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if err := e.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteError checks that a failing writer's error reaches the caller.
func TestWriteError(t *testing.T) {
	e, err := NewEncoder(failWriter{}, 48000, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(make([]float32, 2*frameLen)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Write: %v", err)
	}
	if err := e.Flush(); err == nil {
		t.Error("Flush after a write error: nil")
	}
}

// TestSteadyStateAllocs checks that Write allocates nothing once running.
func TestSteadyStateAllocs(t *testing.T) {
	en := loadS16(t, "en_2_48k_3s.s16")
	x := interleave(en, en)
	e, err := NewEncoder(io.Discard, 48000, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(x[:2*4800]); err != nil {
		t.Fatal(err)
	}
	pos := 2 * 4800
	allocs := testing.AllocsPerRun(20, func() {
		if pos+2*4800 > len(x) {
			pos = 0
		}
		if err := e.Write(x[pos : pos+2*4800]); err != nil {
			t.Fatal(err)
		}
		pos += 2 * 4800
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per Write", allocs)
	}
}
