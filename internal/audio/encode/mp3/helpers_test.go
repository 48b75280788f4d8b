package mp3

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// readWAV reads a 16-bit PCM WAV file as float32 samples.
func readWAV(t testing.TB, path string) (samples []float32, rate, channels int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("%s: not a WAV file", path)
	}
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(len(b), p+8+n)]
		switch id {
		case "fmt ":
			channels = int(binary.LittleEndian.Uint16(body[2:]))
			rate = int(binary.LittleEndian.Uint32(body[4:]))
			if bits := binary.LittleEndian.Uint16(body[14:]); bits != 16 {
				t.Fatalf("%s: %d-bit samples, want 16", path, bits)
			}
		case "data":
			samples = make([]float32, len(body)/2)
			for i := range samples {
				samples[i] = float32(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
			}
		}
		p += 8 + n + n&1
	}
	if samples == nil || rate == 0 {
		t.Fatalf("%s: no fmt or data chunk", path)
	}
	return samples, rate, channels
}

// ffmpegPath returns the ffmpeg binary, skipping the test when it is
// missing (failing under CI, which installs it).
func ffmpegPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg not found; CI must install it")
		}
		t.Skip("ffmpeg not found")
	}
	return p
}

// ffmpegDecode decodes MP3 bytes with ffmpeg to interleaved float32 at the
// given layout; any message ffmpeg prints at -v error fails the test.
func ffmpegDecode(t testing.TB, mp3 []byte, channels, rate int) []float32 {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.mp3")
	if err := os.WriteFile(in, mp3, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ffmpegPath(t), "-v", "error", "-i", in, "-f", "f32le",
		"-ac", strconv.Itoa(channels), "-ar", strconv.Itoa(rate), "-")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Fatalf("ffmpeg reported: %s", stderr.String())
	}
	b := stdout.Bytes()
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// encode encodes samples in chunks of chunk samples per channel (all at
// once if chunk <= 0).
func encode(t testing.TB, samples []float32, rate, channels, bitrate, chunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, rate, channels, bitrate)
	if err != nil {
		t.Fatal(err)
	}
	if chunk <= 0 {
		chunk = len(samples)
	} else {
		chunk *= channels
	}
	for len(samples) > 0 {
		n := min(chunk, len(samples))
		if err := e.Write(samples[:n]); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
		samples = samples[n:]
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// channel extracts channel c of interleaved samples.
func channel(x []float32, channels, c int) []float32 {
	out := make([]float32, len(x)/channels)
	for i := range out {
		out[i] = x[i*channels+c]
	}
	return out
}

// bestLag returns the lag in [0, maxLag] at which dec[lag:] best matches
// ref (normalized cross-correlation).
func bestLag(ref, dec []float32, maxLag int) (int, float64) {
	best, bestC := 0, math.Inf(-1)
	n := len(ref)
	for lag := 0; lag <= maxLag && lag+n/2 < len(dec); lag++ {
		var xy, yy float64
		m := min(n, len(dec)-lag)
		for i := 0; i < m; i++ {
			xy += float64(ref[i]) * float64(dec[i+lag])
			yy += float64(dec[i+lag]) * float64(dec[i+lag])
		}
		if c := xy / math.Sqrt(yy+1e-20); c > bestC {
			best, bestC = lag, c
		}
	}
	return best, bestC
}

// segSNR is the segmental SNR in dB of dec against ref over segments of seg
// samples: the mean of per-segment SNRs, each clamped to [-10, 40] dB, over
// segments whose reference level is above -50 dBFS (silence carries no
// speech and would dominate with meaningless values).
func segSNR(ref, dec []float32, seg int) (float64, error) {
	var sum float64
	var count int
	for s := 0; s+seg <= min(len(ref), len(dec)); s += seg {
		var sig, noise float64
		for i := s; i < s+seg; i++ {
			r, d := float64(ref[i]), float64(dec[i])
			sig += r * r
			noise += (r - d) * (r - d)
		}
		if sig/float64(seg) < 1e-5 { // -50 dBFS
			continue
		}
		snr := 10 * math.Log10(sig/(noise+1e-20))
		sum += max(-10, min(40, snr))
		count++
	}
	if count == 0 {
		return 0, errors.New("no active segments")
	}
	return sum / float64(count), nil
}
