package audio

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var regen = flag.Bool("regen", false, "regenerate testdata/*.flac and *.mp3 with the flac and lame tools")

// flacFixture describes a committed FLAC file made by the reference encoder
// (Debian flac 1.4.2) from fixtureSignal; decoding must give the signal back
// exactly (FLAC is lossless).
type flacFixture struct {
	file                 string
	rate, channels, bits int
	frames               int
}

var flacFixtures = []flacFixture{
	// 24 kHz uses frame-header sample-rate code 0x7, which makes
	// mewkiz/flac log unless we rewrite it (see patchFLACHeader).
	{"s24_24k_stereo.flac", 24000, 2, 24, 9000},
	{"s20_16k_mono.flac", 16000, 1, 20, 9600},
	{"s8_8k_mono.flac", 8000, 1, 8, 8000},
	{"s16_44k_stereo.flac", 44100, 2, 16, 10000},
}

// fixtureSignal is a deterministic integer test signal: a triangle wave
// per channel plus LCG noise, spanning most of the bit depth.
func fixtureSignal(frames, channels, bits int) [][]int32 {
	out := make([][]int32, channels)
	peak := int64(1)<<(bits-1) - 1
	x := uint32(2024)
	for c := range out {
		out[c] = make([]int32, frames)
		period := int64(97 + 40*c)
		for i := range out[c] {
			x = x*1664525 + 1013904223
			ph := int64(i) % period
			tri := (4*ph*peak)/period - peak // -peak .. 3·peak
			if tri > peak {
				tri = 2*peak - tri
			}
			noise := int64(x>>8)%(peak/32+1) - peak/64
			v := max(-peak-1, min(peak, tri*3/4+noise))
			out[c][i] = int32(v)
		}
	}
	return out
}

// mp3Fixture is a committed MP3 made by LAME from sines; the decoder's
// output is checked by frequency content, not bit-exactly.
type mp3Fixture struct {
	file     string
	rate     int
	channels int
	freqs    []float64 // per channel
	lameArgs []string
	id3      bool
}

var mp3Fixtures = []mp3Fixture{
	{"sine440_44k_mono.mp3", 44100, 1, []float64{440}, []string{"-m", "m", "-b", "64"}, false},
	{"sine_22k_stereo_id3.mp3", 22050, 2, []float64{440, 1000}, []string{"-m", "s", "-b", "64", "--id3v2-only", "--tt", "nanovox test"}, true},
}

// TestRegenerateFixtures rebuilds the encoded fixtures. Run with
// `go test ./internal/audio -run TestRegenerateFixtures -regen` on a machine
// with flac and lame installed; the files are committed, so normal test runs
// need neither tool.
func TestRegenerateFixtures(t *testing.T) {
	if !*regen {
		t.Skip("run with -regen to rebuild testdata fixtures")
	}
	dir := t.TempDir()
	for _, f := range flacFixtures {
		// The encoder's input is a WAVE_FORMAT_EXTENSIBLE file built by the
		// test helpers, so odd depths (20-bit) carry their valid-bit count.
		sig := fixtureSignal(f.frames, f.channels, f.bits)
		width := (f.bits + 7) / 8
		shift := uint(8*width - f.bits) // left-justified in the container
		var pcm []byte
		for i := 0; i < f.frames; i++ {
			for c := 0; c < f.channels; c++ {
				v := uint32(sig[c][i]) << shift
				if width == 1 {
					v = uint32(sig[c][i] + 128) // 8-bit WAV is unsigned
				}
				for k := 0; k < width; k++ {
					pcm = append(pcm, byte(v>>(8*k)))
				}
			}
		}
		wav := riffFile("RIFF", le, extFmtChunk(le, uint16(f.channels), uint32(f.rate), uint16(width*f.channels),
			uint16(8*width), uint16(f.bits), 1, nil), chunk{id: "data", body: pcm})
		in := filepath.Join(dir, f.file+".wav")
		if err := os.WriteFile(in, wav, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-s", "-f", "-o", filepath.Join("testdata", f.file), in}
		if out, err := exec.Command("flac", args...).CombinedOutput(); err != nil {
			t.Fatalf("flac %v: %v\n%s", args, err, out)
		}
	}
	for _, f := range mp3Fixtures {
		n := f.rate // one second
		raw := make([]byte, 0, n*f.channels*2)
		for i := 0; i < n; i++ {
			for c := 0; c < f.channels; c++ {
				v := int16(math.Round(0.5 * 32767 * math.Sin(2*math.Pi*f.freqs[c]*float64(i)/float64(f.rate))))
				raw = append(raw, byte(v), byte(uint16(v)>>8))
			}
		}
		in := filepath.Join(dir, f.file+".raw")
		if err := os.WriteFile(in, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--silent", "-r", "-s", fmt.Sprintf("%g", float64(f.rate)/1000),
			"--bitwidth", "16", "--signed", "--little-endian"}, f.lameArgs...)
		args = append(args, in, filepath.Join("testdata", f.file))
		if out, err := exec.Command("lame", args...).CombinedOutput(); err != nil {
			t.Fatalf("lame %v: %v\n%s", args, err, out)
		}
	}
}
