package mp3

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

// frameInfo is what the tests read back from an MPEG audio frame header.
type frameInfo struct {
	lsf, mono     bool
	bitrate, rate int // bit/s, Hz
	padding       bool
	size          int // bytes
}

// frames splits an encoded stream into frames, failing the test on any
// byte that is not a valid Layer III header where one must start.
func frames(t *testing.T, b []byte) []frameInfo {
	t.Helper()
	var out []frameInfo
	for p := 0; p < len(b); {
		if len(b)-p < 4 || b[p] != 0xFF || b[p+1]&0xE0 != 0xE0 {
			t.Fatalf("offset %d: no frame sync", p)
		}
		h := b[p : p+4]
		var f frameInfo
		switch h[1] >> 3 & 3 {
		case 3:
		case 2:
			f.lsf = true
		default:
			t.Fatalf("offset %d: version bits %d", p, h[1]>>3&3)
		}
		if h[1]>>1&3 != 1 || h[1]&1 != 1 {
			t.Fatalf("offset %d: not Layer III without CRC: %#x", p, h[1])
		}
		table, rates := bitratesMPEG1, [3]int{44100, 48000, 32000}
		if f.lsf {
			table, rates = bitratesLSF, [3]int{22050, 24000, 16000}
		}
		bi, ri := int(h[2]>>4), int(h[2]>>2&3)
		if bi == 0 || bi == 15 || ri == 3 {
			t.Fatalf("offset %d: bitrate index %d, rate index %d", p, bi, ri)
		}
		f.bitrate, f.rate, f.padding, f.mono = table[bi]*1000, rates[ri], h[2]&2 != 0, h[3]>>6 == 3
		f.size = 144 * f.bitrate / f.rate
		if f.lsf {
			f.size /= 2
		}
		if f.padding {
			f.size++
		}
		out = append(out, f)
		p += f.size
		if p > len(b) {
			t.Fatalf("last frame truncated")
		}
	}
	return out
}

// goMP3Decode decodes with github.com/hajimehoshi/go-mp3, a second,
// independent decoder, and returns its first channel (it always outputs
// 16-bit stereo).
func goMP3Decode(t *testing.T, b []byte) []float32 {
	t.Helper()
	d, err := gomp3.NewDecoder(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("go-mp3: %v", err)
	}
	var pcm bytes.Buffer
	if _, err := pcm.ReadFrom(d); err != nil {
		t.Fatalf("go-mp3: %v", err)
	}
	raw := pcm.Bytes()
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = float32(int16(uint16(raw[4*i])|uint16(raw[4*i+1])<<8)) / 32768
	}
	return out
}

func TestGoMP3Decodes(t *testing.T) {
	x, rate, _ := readWAV(t, speechFile)
	x = x[:rate]
	got := goMP3Decode(t, encode(t, x, rate, 1, 0, 0))
	if q := quality(x, got, 1, rate, delay); q < 28 {
		t.Errorf("go-mp3 decode: segmental SNR %.2f dB < 28 dB", q)
	} else {
		t.Logf("go-mp3 decode: segmental SNR %.2f dB", q)
	}
}

// TestFrames encodes a short noisy signal at every rate, bitrate and channel
// count: the frames must parse, carry the requested format, average the
// exact bitrate (padding at 44.1 and 22.05 kHz), and decode in go-mp3.
func TestFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rate := range []int{16000, 22050, 24000, 32000, 44100, 48000} {
		for _, br := range SupportedBitrates(rate) {
			// Mono and stereo in turn: every bitrate once, both layouts at
			// every rate, in half the time.
			for ch := 1 + br/1000%2; ch <= 2; ch += 2 {
				n := rate / 20 // a few frames
				x := make([]float32, n*ch)
				for i := range x {
					// Speech-like level with a loud tone: exercises all tables.
					x[i] = float32(0.1*rng.NormFloat64() + 0.5*math.Sin(float64(i/ch)*0.05))
				}
				b := encode(t, x, rate, ch, br, 1000)
				fs := frames(t, b)
				frameLen := 1152
				if rate < 32000 {
					frameLen = 576
				}
				if want := (n + delay + frameLen - 1) / frameLen; len(fs) != want {
					t.Errorf("%d Hz %d bit/s %dch: %d frames, want %d", rate, br, ch, len(fs), want)
				}
				for _, f := range fs {
					if f.rate != rate || f.bitrate != br || f.mono != (ch == 1) {
						t.Fatalf("%d Hz %d bit/s %dch: frame says %+v", rate, br, ch, f)
					}
				}
				// CBR: the bytes match the bitrate to within one byte.
				exact := float64(len(fs)*frameLen) * float64(br) / 8 / float64(rate)
				if math.Abs(float64(len(b))-exact) > 1 {
					t.Errorf("%d Hz %d bit/s %dch: %d bytes, want %.1f", rate, br, ch, len(b), exact)
				}
				if ch == 1 && (br == SupportedBitrates(rate)[0] || br == 64000) {
					goMP3Decode(t, b)
				}
			}
		}
	}
}

// TestStreaming checks that chunking does not change the stream and that
// every Write leaves only whole frames in the output.
func TestStreaming(t *testing.T) {
	x, rate, _ := readWAV(t, speechFile)
	x = x[:rate/2]
	want := encode(t, x, rate, 1, 0, 0)
	for _, chunk := range []int{1, 7, 576, 1153, 4800} {
		var buf bytes.Buffer
		e, err := NewEncoder(&buf, rate, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for s := 0; s < len(x); s += chunk {
			if err := e.Write(x[s:min(s+chunk, len(x))]); err != nil {
				t.Fatal(err)
			}
			// Every frame the samples so far complete is out, and only those.
			fed := min(s+chunk, len(x))
			if got, want := buf.Len(), fed/1152*frameBytes(rate, DefaultMonoBitrate); got != want {
				t.Fatalf("chunk %d: %d bytes written after %d samples, want %d (whole frames)", chunk, got, fed, want)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("chunk %d: stream differs from one-shot encoding", chunk)
		}
	}
}

func frameBytes(rate, bitrate int) int { return 144 * bitrate / rate }

// TestConcatenation: two encoded bodies back to back are one valid stream
// whose duration is the sum (no header or trailer gets in the way).
func TestConcatenation(t *testing.T) {
	x, rate, _ := readWAV(t, speechFile)
	a := encode(t, x[:rate/2], rate, 1, 0, 0)
	b := encode(t, x[rate/2:rate+rate/3], rate, 1, 0, 0)
	dec := ffmpegDecode(t, append(append([]byte(nil), a...), b...), 1, rate)
	na, nb := len(frames(t, a))*1152, len(frames(t, b))*1152
	if len(dec) != na+nb {
		t.Errorf("concatenation decodes to %d samples, want %d + %d", len(dec), na, nb)
	}
	// The join is seamless: the second body decodes as it would alone.
	if q := quality(x[rate/2:rate+rate/3], dec[na:], 1, rate, delay); q < 28 {
		t.Errorf("second body after the join: segmental SNR %.2f dB", q)
	}
}

// TestHostileInput: noise, silence, full-scale square waves, NaN, ±Inf
// and huge values must neither panic nor produce undecodable frames.
func TestHostileInput(t *testing.T) {
	const rate, n = 48000, 2400
	rng := rand.New(rand.NewPCG(3, 4))
	gen := map[string]func(i int) float32{
		"silence":      func(int) float32 { return 0 },
		"noise":        func(int) float32 { return float32(rng.Float64()*2 - 1) },
		"loud noise":   func(int) float32 { return float32(rng.NormFloat64() * 10) },
		"square 100Hz": func(i int) float32 { return float32(1 - 2*(i/240%2)) },
		"nyquist":      func(i int) float32 { return float32(1 - 2*(i%2)) },
		"nan":          func(int) float32 { return float32(math.NaN()) },
		"+inf":         func(int) float32 { return float32(math.Inf(1)) },
		"-inf":         func(int) float32 { return float32(math.Inf(-1)) },
		"huge":         func(i int) float32 { return float32(1e30 * float64(1-2*(i%3%2))) },
		"dc":           func(int) float32 { return 1 },
	}
	var all []byte
	enc := map[string][]byte{}
	for name, f := range gen {
		for ch := 1; ch <= 2; ch++ {
			x := make([]float32, n*ch)
			for i := range x {
				x[i] = f(i / ch)
			}
			b := encode(t, x, rate, ch, 0, 0)
			frames(t, b)
			if ch == 1 {
				goMP3Decode(t, b)
				enc[name] = b
				all = append(all, b...)
			}
		}
	}
	if !bytes.Equal(enc["nan"], enc["silence"]) {
		t.Error("NaN input is not coded as silence")
	}
	if !bytes.Equal(enc["+inf"], enc["dc"]) {
		t.Error("+Inf input is not clipped to 1")
	}
	for i, v := range goMP3Decode(t, enc["silence"]) {
		if v != 0 {
			t.Fatalf("silence decodes to %v at %d", v, i)
		}
	}
	ffmpegDecode(t, all, 1, rate) // fails on any decoder complaint
}

func TestNewEncoderErrors(t *testing.T) {
	tests := []struct {
		name                    string
		rate, channels, bitrate int
	}{
		{"rate 8000", 8000, 1, 0},
		{"rate 0", 0, 1, 0},
		{"rate 96000", 96000, 2, 0},
		{"3 channels", 48000, 3, 0},
		{"0 channels", 48000, 0, 0},
		{"bitrate not in table", 48000, 1, 65000},
		{"LSF-only bitrate at MPEG-1 rate", 48000, 1, 8000},
		{"MPEG-1-only bitrate at LSF rate", 24000, 1, 320000},
		{"negative bitrate", 48000, 1, -64000},
	}
	for _, tt := range tests {
		if _, err := NewEncoder(new(bytes.Buffer), tt.rate, tt.channels, tt.bitrate); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: error %v, want ErrUnsupported", tt.name, err)
		}
	}
	if _, err := NewEncoder(nil, 48000, 1, 0); err == nil {
		t.Error("nil writer: no error")
	}
	for _, rate := range []int{16000, 22050, 24000, 32000, 44100, 48000} {
		if !SupportedRate(rate) {
			t.Errorf("SupportedRate(%d) = false", rate)
		}
		for _, ch := range []int{1, 2} {
			if _, err := NewEncoder(new(bytes.Buffer), rate, ch, 0); err != nil {
				t.Errorf("%d Hz, %d channels, default bitrate: %v", rate, ch, err)
			}
		}
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWriteErrors(t *testing.T) {
	e, _ := NewEncoder(new(bytes.Buffer), 48000, 2, 0)
	if err := e.Write(make([]float32, 3)); err == nil {
		t.Error("odd sample count for stereo: no error")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(make([]float32, 2)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}

	boom := errors.New("boom")
	e, _ = NewEncoder(failWriter{boom}, 48000, 1, 0)
	if err := e.Write(make([]float32, 1152)); !errors.Is(err, boom) {
		t.Errorf("Write to failing writer: %v, want boom", err)
	}
	if err := e.Close(); !errors.Is(err, boom) {
		t.Errorf("Close after a failed write: %v, want boom", err)
	}
}

func TestWriteDoesNotAllocate(t *testing.T) {
	x, rate, _ := readWAV(t, speechFile)
	var buf bytes.Buffer
	buf.Grow(1 << 20)
	e, _ := NewEncoder(&buf, rate, 1, 0)
	_ = e.Write(x[:rate/4]) // warm up the output buffer
	off := rate / 4
	allocs := testing.AllocsPerRun(20, func() {
		_ = e.Write(x[off : off+2400])
		off += 2400
	})
	if allocs != 0 {
		t.Errorf("Write allocates %.1f times per call in steady state", allocs)
	}
}

type countingWriter struct {
	bytes.Buffer
	calls int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(p)
}

// TestLargeWrite: one long Write reaches the writer in bounded pieces and
// yields the same stream as small Writes.
func TestLargeWrite(t *testing.T) {
	x, rate, _ := readWAV(t, speechFile)
	x = x[:rate] // 1 s at 320 kbit/s is 40 kB, more than maxPending
	st := make([]float32, 2*len(x))
	for i, v := range x {
		st[2*i], st[2*i+1] = v, -v
	}
	var w countingWriter
	e, _ := NewEncoder(&w, rate, 2, 320000)
	if err := e.Write(st); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if w.calls < w.Len()/maxPending {
		t.Errorf("%d bytes reached the writer in %d calls; want pieces of at most about %d bytes", w.Len(), w.calls, maxPending)
	}
	if !bytes.Equal(w.Bytes(), encode(t, st, rate, 2, 320000, 1152)) {
		t.Error("one large Write and many small ones give different streams")
	}
}

// TestShortInputs: even empty input gives a stream that ffmpeg opens (it
// rejects a file of one frame): two frames of silence.
func TestShortInputs(t *testing.T) {
	for _, n := range []int{0} { // ffmpeg is slow to start; one case covers the rule
		x := make([]float32, n)
		for i := range x {
			x[i] = 0.25
		}
		dec := ffmpegDecode(t, encode(t, x, 48000, 1, 0, 0), 1, 48000)
		want := max((n+delay+1151)/1152, 2) * 1152
		if len(dec) != want {
			t.Errorf("%d samples in: %d decoded, want %d", n, len(dec), want)
		}
	}
}
