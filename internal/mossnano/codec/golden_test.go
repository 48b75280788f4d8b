package codec_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
)

var fixtures = []string{"tiny-a", "tiny-b"}

func fixtureDir(name string) string { return filepath.Join("..", "..", "..", "testdata", name) }

var (
	fixtureMu     sync.Mutex
	fixtureModels = map[string]*codec.Model{}
)

// fixtureModel loads (once) the codec of a golden fixture.
func fixtureModel(t testing.TB, name string) *codec.Model {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if m := fixtureModels[name]; m != nil {
		return m
	}
	m, err := codec.Load(filepath.Join(fixtureDir(name), "codec"), codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fixtureModels[name] = m
	return m
}

// readPCM16WAV reads a RIFF PCM16 file as interleaved float32 (int16/32768).
func readPCM16WAV(t testing.TB, path string) (pcm []float32, channels, rate int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("%s: not a RIFF WAVE file", path)
	}
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(len(b), p+8+size)]
		switch id {
		case "fmt ":
			if binary.LittleEndian.Uint16(body) != 1 || binary.LittleEndian.Uint16(body[14:]) != 16 {
				t.Fatalf("%s: not PCM16", path)
			}
			channels = int(binary.LittleEndian.Uint16(body[2:]))
			rate = int(binary.LittleEndian.Uint32(body[4:]))
		case "data":
			pcm = make([]float32, len(body)/2)
			for i := range pcm {
				pcm[i] = float32(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
			}
			return pcm, channels, rate
		}
		p += 8 + size + size%2
	}
	t.Fatalf("%s: no data chunk", path)
	return nil, 0, 0
}

func readF32(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// maxAbsDiff returns max |a-b| and its index; lengths must match.
func maxAbsDiff(t testing.TB, a, b []float32) (float64, int) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("length %d, want %d", len(a), len(b))
	}
	var worst float64
	at := -1
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if d > worst || math.IsNaN(d) {
			worst, at = d, i
			if math.IsNaN(d) {
				return math.Inf(1), i
			}
		}
	}
	return worst, at
}

type roundtripGolden struct {
	NumSamples    int     `json:"num_samples"`
	Codes         [][]int `json:"codes"`
	CodecContexts struct {
		Encoder []int `json:"encoder"`
		Decoder []int `json:"decoder"`
	} `json:"codec_contexts"`
}

type generationGolden struct {
	TextChunks     []string `json:"text_chunks"`
	RefCodes       [][]int  `json:"ref_codes"`
	Frames         [][]int  `json:"frames"`
	FramesPerChunk []int    `json:"frames_per_chunk"`
	SampleRate     int      `json:"sample_rate"`
}

func TestGoldenRoundtrip(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			dir := fixtureDir(name)
			m := fixtureModel(t, name)
			var g roundtripGolden
			readJSON(t, filepath.Join(dir, "golden", "codec_roundtrip.json"), &g)
			pcm, ch, rate := readPCM16WAV(t, filepath.Join(dir, "ref.wav"))
			if ch != m.Channels() || rate != m.SampleRate() {
				t.Fatalf("ref.wav is %d ch %d Hz, codec wants %d ch %d Hz", ch, rate, m.Channels(), m.SampleRate())
			}
			if len(pcm)/ch != g.NumSamples {
				t.Fatalf("ref.wav has %d samples per channel, golden says %d", len(pcm)/ch, g.NumSamples)
			}
			codes, err := m.Encode(pcm)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g.Codes, codes); diff != "" {
				t.Fatalf("codes differ (-golden +got):\n%s", diff)
			}

			var canon generationGolden
			readJSON(t, filepath.Join(dir, "golden", "canonical.json"), &canon)
			nvq := len(canon.RefCodes[0])
			prefix := make([][]int, len(codes))
			for i, f := range codes {
				prefix[i] = f[:nvq]
			}
			if diff := cmp.Diff(canon.RefCodes, prefix); diff != "" {
				t.Fatalf("canonical ref_codes differ from the first %d codebooks (-golden +got):\n%s", nvq, diff)
			}

			wav, err := m.Decode(codes)
			if err != nil {
				t.Fatal(err)
			}
			want := readF32(t, filepath.Join(dir, "golden", "codec_roundtrip.f32"))
			d, at := maxAbsDiff(t, wav, want)
			t.Logf("whole decode of %d frames: max abs diff %.3g (at %d)", len(codes), d, at)
			if d > 1e-4 {
				t.Fatalf("max abs diff %g at %d (got %g, want %g)", d, at, wav[at], want[at])
			}
		})
	}
}

func TestGoldenContexts(t *testing.T) {
	for _, name := range fixtures {
		var man struct {
			CodecContexts struct {
				Encoder []int `json:"encoder"`
				Decoder []int `json:"decoder"`
			} `json:"codec_contexts"`
		}
		readJSON(t, filepath.Join(fixtureDir(name), "manifest.json"), &man)
		cfg, err := codec.LoadConfig(filepath.Join(fixtureDir(name), "codec", "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		enc, dec := cfg.Contexts()
		if diff := cmp.Diff(man.CodecContexts.Encoder, enc); diff != "" {
			t.Errorf("%s encoder contexts (-manifest +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(man.CodecContexts.Decoder, dec); diff != "" {
			t.Errorf("%s decoder contexts (-manifest +got):\n%s", name, diff)
		}
	}
}

func TestGoldenCanonicalDecode(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			dir := fixtureDir(name)
			m := fixtureModel(t, name)
			var g generationGolden
			readJSON(t, filepath.Join(dir, "golden", "canonical.json"), &g)
			if len(g.FramesPerChunk) != 1 {
				t.Fatalf("canonical has %d chunks, want 1", len(g.FramesPerChunk))
			}
			wav, err := m.Decode(g.Frames)
			if err != nil {
				t.Fatal(err)
			}
			want := readF32(t, filepath.Join(dir, "golden", "canonical.f32"))
			d, at := maxAbsDiff(t, wav, want)
			t.Logf("%d frames: max abs diff %.3g", len(g.Frames), d)
			if d > 1e-4 {
				t.Fatalf("max abs diff %g at %d", d, at)
			}
		})
	}
}

// TestGoldenLong decodes each chunk of the long generation on its own and
// checks the OpenMOSS assembly: chunk audio, then 0.40 s of silence after a
// chunk of at most 4 whitespace-separated words, else 0.24 s (none after the
// last chunk).
func TestGoldenLong(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			dir := fixtureDir(name)
			m := fixtureModel(t, name)
			var g generationGolden
			readJSON(t, filepath.Join(dir, "golden", "long.json"), &g)
			want := readF32(t, filepath.Join(dir, "golden", "long.f32"))
			if len(g.TextChunks) != len(g.FramesPerChunk) {
				t.Fatalf("%d chunks, %d frame counts", len(g.TextChunks), len(g.FramesPerChunk))
			}
			ch := m.Channels()
			pos, f0 := 0, 0
			var worst float64
			for c, nf := range g.FramesPerChunk {
				wav, err := m.Decode(g.Frames[f0 : f0+nf])
				if err != nil {
					t.Fatal(err)
				}
				f0 += nf
				if pos+len(wav) > len(want) {
					t.Fatalf("chunk %d overruns long.f32", c)
				}
				d, at := maxAbsDiff(t, wav, want[pos:pos+len(wav)])
				if d > 1e-4 {
					t.Fatalf("chunk %d: max abs diff %g at %d", c, d, at)
				}
				worst = max(worst, d)
				pos += len(wav)
				if c == len(g.FramesPerChunk)-1 {
					break
				}
				pause := 0.24
				if len(strings.Fields(g.TextChunks[c])) <= 4 {
					pause = 0.40
				}
				n := int(math.Round(float64(g.SampleRate)*pause)) * ch
				for i, v := range want[pos : pos+n] {
					if v != 0 {
						t.Fatalf("chunk %d: silence sample %d is %g", c, i, v)
					}
				}
				pos += n
			}
			if f0 != len(g.Frames) || pos != len(want) {
				t.Fatalf("used %d of %d frames and %d of %d samples", f0, len(g.Frames), pos, len(want))
			}
			t.Logf("%d chunks, %d frames: max abs diff %.3g", len(g.FramesPerChunk), f0, worst)
		})
	}
}
