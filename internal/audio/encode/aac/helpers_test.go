package aac

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// ffmpegPath finds ffmpeg; without it the test is skipped, unless CI is set.
func ffmpegPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("ffmpeg not found: %v", err)
		}
		t.Skip("ffmpeg not found")
	}
	return p
}

// decodeFFmpeg decodes an ADTS stream with ffmpeg to interleaved float32 at
// the given rate and channel count. Anything ffmpeg prints at level "error"
// fails the test.
func decodeFFmpeg(t testing.TB, stream []byte, rate, channels int) []float32 {
	t.Helper()
	ff := ffmpegPath(t)
	in := filepath.Join(t.TempDir(), "in.aac")
	if err := os.WriteFile(in, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ff, "-v", "error", "-i", in, "-f", "f32le",
		"-ac", strconv.Itoa(channels), "-ar", strconv.Itoa(rate), "-")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, errb.Bytes())
	}
	if errb.Len() > 0 {
		t.Fatalf("ffmpeg reported: %s", errb.Bytes())
	}
	b := out.Bytes()
	pcm := make([]float32, len(b)/4)
	for i := range pcm {
		pcm[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return pcm
}

// loadS16 reads a testdata clip of raw 16-bit little-endian mono samples.
func loadS16(t testing.TB, name string) []float32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, len(b)/2)
	for i := range x {
		x[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
	}
	return x
}

// encodeAll encodes interleaved samples in chunks of chunk frames per Write.
func encodeAll(t testing.TB, x []float32, rate, channels, bitrate, chunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, rate, channels, bitrate)
	if err != nil {
		t.Fatal(err)
	}
	step := chunk * channels
	for i := 0; i < len(x); i += step {
		if err := e.Write(x[i:min(i+step, len(x))]); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// channelOf extracts channel ch of interleaved samples.
func channelOf(x []float32, channels, ch int) []float32 {
	y := make([]float32, len(x)/channels)
	for i := range y {
		y[i] = x[i*channels+ch]
	}
	return y
}

// bestLag returns the lag d in [0, maxLag] maximizing the normalized
// cross-correlation of dec[d:] with ref. To stay cheap it searches all lags
// over the loudest 2048 samples of ref, then refines ±8 samples around the
// best one over the whole signal.
func bestLag(ref, dec []float32, maxLag int) int {
	const win = 2048
	start, loudest := 0, -1.0
	for s := 0; s+win <= len(ref); s += 512 {
		var e float64
		for _, v := range ref[s : s+win] {
			e += float64(v) * float64(v)
		}
		if e > loudest {
			start, loudest = s, e
		}
	}
	coarse := argmaxCorr(ref, dec, start, min(start+win, len(ref)), 0, maxLag)
	return argmaxCorr(ref, dec, 0, len(ref), max(coarse-8, 0), min(coarse+8, maxLag))
}

// argmaxCorr returns the lag in [lo, hi] maximizing the correlation of
// ref[start:end] with dec shifted by the lag, normalized by dec's energy.
func argmaxCorr(ref, dec []float32, start, end, lo, hi int) int {
	best, arg := math.Inf(-1), lo
	for d := lo; d <= hi; d++ {
		var s, e float64
		for i := start; i < end && i+d < len(dec); i++ {
			s += float64(ref[i]) * float64(dec[i+d])
			e += float64(dec[i+d]) * float64(dec[i+d])
		}
		if e == 0 {
			continue
		}
		if c := s / math.Sqrt(e); c > best {
			best, arg = c, d
		}
	}
	return arg
}

// longTests skips t unless NANOVOX_LONG_TESTS is set.
func longTests(t testing.TB) {
	t.Helper()
	if os.Getenv("NANOVOX_LONG_TESTS") == "" {
		t.Skip("long test; set NANOVOX_LONG_TESTS=1")
	}
}

// countFrames returns the number of ADTS frames in s by following the
// frame_length fields, or -1 if they do not tile s.
func countFrames(s []byte) int {
	n := 0
	for len(s) > 0 {
		if len(s) < 7 || s[0] != 0xFF || s[1]&0xF0 != 0xF0 {
			return -1
		}
		size := int(s[3]&3)<<11 | int(s[4])<<3 | int(s[5])>>5
		if size < 7 || size > len(s) {
			return -1
		}
		s = s[size:]
		n++
	}
	return n
}

// decodeBatch decodes several ADTS streams of the same rate and channel
// count with one ffmpeg run (ffmpeg starts slowly; ADTS streams may be
// concatenated) and splits the output at the stream boundaries: each stream
// decodes to 1024 samples per channel per frame. The decoder's overlap-add
// carries a stream's final silence into the next stream's first 1024
// samples, which are the encoder delay and never compared.
func decodeBatch(t testing.TB, streams [][]byte, rate, channels int) [][]float32 {
	t.Helper()
	var all []byte
	want := 0
	for i, s := range streams {
		n := countFrames(s)
		if n < 0 {
			t.Fatalf("stream %d is not a sequence of ADTS frames", i)
		}
		want += n * frameLen * channels
		all = append(all, s...)
	}
	dec := decodeFFmpeg(t, all, rate, channels)
	if len(dec) != want {
		t.Fatalf("ffmpeg decoded %d samples, want %d (1024 per frame and channel)", len(dec), want)
	}
	out := make([][]float32, len(streams))
	for i, s := range streams {
		n := countFrames(s) * frameLen * channels
		out[i], dec = dec[:n], dec[n:]
	}
	return out
}

// segSNR is the segmental SNR in dB of dec against ref (same alignment):
// the mean over 20 ms segments whose reference energy is within 40 dB of the
// loudest segment (so silence does not count) of the per-segment SNR, each
// clamped to [-10, 35] dB as usual for this measure.
func segSNR(ref, dec []float32, rate int) float64 {
	seg := rate / 50
	n := min(len(ref), len(dec))
	var energies []float64
	var maxE float64
	for i := 0; i+seg <= n; i += seg {
		var e float64
		for _, v := range ref[i : i+seg] {
			e += float64(v) * float64(v)
		}
		energies = append(energies, e)
		maxE = max(maxE, e)
	}
	var sum float64
	count := 0
	for s, e := range energies {
		if e == 0 || e < maxE*1e-4 {
			continue
		}
		var noise float64
		for i := s * seg; i < (s+1)*seg; i++ {
			d := float64(ref[i]) - float64(dec[i])
			noise += d * d
		}
		snr := 35.0
		if noise > 0 {
			snr = min(max(10*math.Log10(e/noise), -10), 35)
		}
		sum += snr
		count++
	}
	if count == 0 {
		return math.NaN()
	}
	return sum / float64(count)
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
