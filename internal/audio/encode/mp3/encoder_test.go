package mp3

import (
	"math"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

const speechFile = "testdata/speech48k.wav"

// resampled caches the test clip at other rates.
var resampled = map[int][]float32{}

// speech returns the test clip at rate Hz (resampled by ffmpeg when rate is
// not 48 kHz) with the given number of channels. A second channel holds
// the clip reversed in time, so that swapped channels cannot pass.
func speech(t testing.TB, rate, channels int) []float32 {
	t.Helper()
	x, r, _ := readWAV(t, speechFile)
	if c, ok := resampled[rate]; ok {
		x = c
	} else if rate != r {
		cmd := exec.Command(ffmpegPath(t), "-v", "error", "-i", speechFile,
			"-af", "aresample=resampler=soxr", "-ar", strconv.Itoa(rate), "-f", "f32le", "-")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ffmpeg resample: %v", err)
		}
		x = make([]float32, len(out)/4)
		for i := range x {
			x[i] = math.Float32frombits(uint32(out[4*i]) | uint32(out[4*i+1])<<8 | uint32(out[4*i+2])<<16 | uint32(out[4*i+3])<<24)
		}
		resampled[rate] = x
	}
	if channels == 1 {
		return x
	}
	st := make([]float32, 2*len(x))
	for i, v := range x {
		st[2*i] = v
		st[2*i+1] = 0.8 * x[len(x)-1-i]
	}
	return st
}

// sweep returns an exponential sine sweep from 50 Hz to hi Hz, amplitude
// 0.5, 1 s; a second channel sweeps downwards.
func sweep(rate, channels int, hi float64) []float32 {
	n := rate
	out := make([]float32, n*channels)
	k := math.Log(hi / 50)
	T := float64(n) / float64(rate)
	for c := 0; c < channels; c++ {
		for i := 0; i < n; i++ {
			tt := float64(i) / float64(rate)
			if c == 1 {
				tt = T - tt
			}
			// Phase of f(t) = 50·e^(k t/T).
			ph := 2 * math.Pi * 50 * T / k * (math.Exp(k*tt/T) - 1)
			out[i*channels+c] = float32(0.5 * math.Sin(ph))
		}
	}
	return out
}

// quality is the package's quality measure: the segmental SNR (20 ms
// segments) of every channel of dec, advanced by delay samples, against
// ref; it returns the worst channel's value.
func quality(ref, dec []float32, channels, rate, delay int) float64 {
	worst := math.Inf(1)
	for c := 0; c < channels; c++ {
		r, d := channel(ref, channels, c), channel(dec, channels, c)
		switch {
		case delay < 0: // the decoder output leads the input
			d = append(make([]float32, -delay), d...)
		case delay < len(d):
			d = d[delay:]
		default:
			d = nil
		}
		s, err := segSNR(r, d, rate/50)
		if err != nil {
			s = math.Inf(-1)
		}
		worst = min(worst, s)
	}
	return worst
}

// levelDB is the energy of dec (after delay) relative to ref in dB.
func levelDB(ref, dec []float32, delay int) float64 {
	var er, ed float64
	for i, v := range ref {
		er += float64(v) * float64(v)
		if i+delay < len(dec) {
			ed += float64(dec[i+delay]) * float64(dec[i+delay])
		}
	}
	return 10 * math.Log10(ed/er)
}

// longTests reports whether the slow test matrix should run.
func longTests(t *testing.T) bool {
	return os.Getenv("NANOVOX_LONG_TESTS") != ""
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name              string
		rate, ch, bitrate int
		signal            string // "speech" or "sweep"
		minSNR            float64
		long              bool // only with NANOVOX_LONG_TESTS
		damage            bool // also run the negative controls
	}{
		{"speech 48k mono default", 48000, 1, 0, "speech", 28, false, true},
		{"speech 48k stereo default", 48000, 2, 0, "speech", 28, false, true},
		{"speech 44.1k mono 64k", 44100, 1, 64000, "speech", 28, false, false},
		{"speech 22.05k stereo 64k", 22050, 2, 64000, "speech", 23, false, false},
		{"sweep 48k mono 32k", 48000, 1, 32000, "sweep", 30, false, false},
		{"speech 48k mono 32k", 48000, 1, 32000, "speech", 22, true, false},
		{"speech 48k mono 320k", 48000, 1, 320000, "speech", 37, true, false},
		{"speech 44.1k stereo 96k", 44100, 2, 96000, "speech", 26, true, false},
		{"speech 32k mono 48k", 32000, 1, 48000, "speech", 26, true, false},
		{"speech 24k mono 32k", 24000, 1, 32000, "speech", 23, true, false},
		{"speech 16k mono 24k", 16000, 1, 24000, "speech", 21, true, false},
		{"sweep 48k mono default", 48000, 1, 0, "sweep", 35, true, false},
		{"sweep 44.1k stereo 128k", 44100, 2, 128000, "sweep", 35, true, false},
		{"sweep 16k stereo 160k", 16000, 2, 160000, "sweep", 35, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long && !longTests(t) {
				t.Skip("long test; set NANOVOX_LONG_TESTS=1")
			}
			var x []float32
			if tt.signal == "speech" {
				x = speech(t, tt.rate, tt.ch)
				if !tt.damage {
					// The full clip only where the negative controls run;
					// half of it elsewhere keeps the -race run short.
					x = x[:len(x)/2]
				}
			} else {
				x = sweep(tt.rate, tt.ch, min(12000, 0.4*float64(tt.rate)))
			}
			mp3 := encode(t, x, tt.rate, tt.ch, tt.bitrate, 4800)
			dec := ffmpegDecode(t, mp3, tt.ch, tt.rate)
			delay := (&Encoder{}).Delay()

			n, frame := len(x)/tt.ch, 1152
			if tt.rate < 32000 {
				frame = 576
			}
			got, want := len(dec)/tt.ch, n+delay
			if got < want || got >= want+frame {
				t.Errorf("decoded %d samples per channel, want %d (input %d + delay %d) rounded up to a %d-sample frame", got, want, n, delay, frame)
			}
			snr := quality(x, dec, tt.ch, tt.rate, delay)
			lvl := levelDB(x, dec, tt.ch*delay)
			t.Logf("segmental SNR %.2f dB (threshold %.0f), level %+.2f dB, %d bytes", snr, tt.minSNR, lvl, len(mp3))
			if snr < tt.minSNR {
				t.Errorf("segmental SNR %.2f dB < %.0f dB", snr, tt.minSNR)
			}
			if math.Abs(lvl) > 0.5 {
				t.Errorf("level %+.2f dB, want within ±0.5 dB", lvl)
			}
			if !tt.damage {
				return
			}
			if tt.ch == 1 {
				// The documented delay must be where the decoded signal
				// matches the input best (normalized cross-correlation over
				// an active stretch, lags up to two frames).
				const from, span = 24000, 4096 // 0.5 s in: speech, not silence
				if lag, _ := bestLag(x[from:from+span], dec[from:], 2*frame); lag != delay {
					t.Errorf("cross-correlation puts the delay at %d samples, Delay() = %d", lag, delay)
				}
			}
			// Negative controls: the measure must reject what a broken
			// encoder would produce.
			damaged := map[string]struct {
				dec   []float32
				delay int
			}{
				"one frame late":     {dec, delay + frame},
				"one frame early":    {dec, delay - frame},
				"off by one granule": {dec, delay + 576},
				"half amplitude":     {scale(dec, 0.5), delay},
				"amplitude -2 dB":    {scale(dec, 0.8), delay},
				"dropped frame":      {dropFrame(dec, tt.ch, frame, n/2), delay},
				"inverted":           {scale(dec, -1), delay},
			}
			if tt.ch == 2 {
				damaged["swapped channels"] = struct {
					dec   []float32
					delay int
				}{swap(dec), delay}
			}
			for name, d := range damaged {
				if q := quality(x, d.dec, tt.ch, tt.rate, d.delay); q >= tt.minSNR {
					t.Errorf("%s: quality %.2f dB passes the %.0f dB threshold", name, q, tt.minSNR)
				} else {
					t.Logf("negative control %q: %.2f dB", name, q)
				}
			}
		})
	}
}

func scale(x []float32, g float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = v * g
	}
	return out
}

// dropFrame removes the codec frame that contains sample at (per channel).
func dropFrame(x []float32, channels, frame, at int) []float32 {
	s := at / frame * frame * channels
	return append(append([]float32(nil), x[:s]...), x[s+frame*channels:]...)
}

func swap(x []float32) []float32 {
	out := make([]float32, len(x))
	for i := 0; i+1 < len(x); i += 2 {
		out[i], out[i+1] = x[i+1], x[i]
	}
	return out
}
