package codec_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
)

func FuzzParseConfig(f *testing.F) {
	for _, p := range []string{
		filepath.Join("..", "..", "..", "testdata", "real", "codec-config.json"),
		filepath.Join(fixtureDir("tiny-a"), "codec", "config.json"),
		filepath.Join(fixtureDir("tiny-b"), "codec", "config.json"),
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		s := string(b)
		f.Add([]byte(strings.Replace(s, `"context_duration": 4.0`, `"context_duration": NaN`, 1)))
		f.Add([]byte(strings.Replace(s, `"patch_size": 240`, `"patch_size": 1e300`, 1)))
		f.Add([]byte(strings.Replace(s, `"num_heads": 4`, `"num_heads": -Infinity`, 1)))
		f.Add([]byte(strings.Replace(s, `"d_model": 256`, `"d_model": 0`, 1)))
		f.Add([]byte(strings.Replace(s, `"decoder_kwargs"`, `"decoder_kwargs_"`, 1)))
	}
	for _, s := range []string{
		"", "{}", "null", "[]", "NaN", `"x"`, "{", `{"encoder_kwargs": null}`,
		`{"encoder_kwargs": [{"module_type": "PatchedPretransform", "patch_size": 7680}], "decoder_kwargs": [{"module_type": "PatchedPretransform", "patch_size": 7680}]}`,
		`{"encoder_kwargs": [{"module_type": "PatchedPretransform", "patch_size": 4194304}, {"module_type": "PatchedPretransform", "patch_size": 4194304}], "decoder_kwargs": []}`,
		`{"encoder_kwargs": [{"module_type": "Transformer", "input_dimension": 1, "output_dimension": 1, "d_model": 65536, "num_heads": 1, "num_layers": 256, "context_duration": 1e308}]}`,
		`{"sampling_rate": NaN, "sample_rate": NaN}`, `{"number_channels": Infinity}`, `{"a": "\"NaN\\"}`,
		strings.Repeat("[", 10000),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := codec.ParseConfig(data)
		if err != nil {
			return
		}
		enc, dec := c.Contexts()
		for _, ctx := range append(enc, dec...) {
			if ctx < 1 || ctx > 1<<16 {
				t.Fatalf("context %d escaped validation", ctx)
			}
		}
		if fr := c.FrameRate(); math.IsNaN(fr) || fr <= 0 {
			t.Fatalf("frame rate %v", fr)
		}
		for _, m := range append(c.Encoder, c.Decoder...) {
			if m.Kind == codec.KindTransformer && (m.DModel%m.Heads != 0 || m.InputDim < 1 || m.OutputDim < 1) {
				t.Fatalf("invalid transformer escaped validation: %+v", m)
			}
		}
	})
}

// FuzzDecode feeds arbitrary codes to whole, streaming and batched decode of
// the tiny codec: they must agree on rejecting them, and bit for bit on the
// samples otherwise.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{8, 1, 0, 2, 0, 127, 0, 0, 0, 5, 0, 6, 0, 7, 0, 8, 0})
	f.Add([]byte{3, 0xff, 0xff, 0, 0, 1, 0})
	f.Add([]byte{0})
	f.Add([]byte{9, 1, 2, 3})
	f.Add([]byte{2, 128, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := fixtureModel(t, "tiny-a")
		if len(data) < 1 {
			return
		}
		nq := int(data[0]) % (m.NumQuantizers() + 2)
		var frames [][]int
		var cur []int
		for p := 1; p+1 < len(data) && len(frames) < 4; p += 2 {
			cur = append(cur, int(int16(binary.LittleEndian.Uint16(data[p:]))))
			if len(cur) == max(nq, 1) {
				frames = append(frames, cur[:nq])
				cur = nil
			}
		}
		whole, werr := m.Decode(frames)
		d := m.NewDecoder()
		var streamed []float32
		var serr error
		for i := range frames {
			if streamed, serr = d.Step(streamed, frames[i:i+1]); serr != nil {
				break
			}
		}
		if (werr == nil) != (serr == nil) {
			t.Fatalf("whole err %v, stream err %v", werr, serr)
		}
		if werr != nil {
			return
		}
		if len(whole) != len(frames)*m.SamplesPerFrame()*m.Channels() {
			t.Fatalf("%d samples for %d frames", len(whole), len(frames))
		}
		if d, at := maxAbsDiff(t, streamed, whole); d != 0 {
			t.Fatalf("stream differs from whole by %g at %d", d, at)
		}
		// The same frames through a Batch, next to a second stream.
		bd, other := m.NewDecoder(), m.NewDecoder()
		b := m.NewBatch()
		dst := make([][]float32, 2)
		for _, f := range frames {
			if err := b.Step([]*codec.Decoder{other, bd}, [][]int{frames[0], f}, dst); err != nil {
				t.Fatal(err)
			}
		}
		if !bitsEqual(dst[1], whole) {
			t.Fatal("batched decode differs from whole")
		}
	})
}

// FuzzEncode encodes arbitrary PCM16 stereo with the tiny codec.
func FuzzEncode(f *testing.F) {
	m := fixtureModel(f, "tiny-b")
	spf := m.SamplesPerFrame()
	f.Add(make([]byte, 4*spf))
	loud := make([]byte, 4*spf+6)
	for i := range loud {
		loud[i] = 0x7f
	}
	f.Add(loud)
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4*3*spf {
			data = data[:4*3*spf]
		}
		pcm := make([]float32, len(data)/2)
		for i := range pcm {
			pcm[i] = float32(int16(binary.LittleEndian.Uint16(data[2*i:]))) / 32768
		}
		codes, err := m.Encode(pcm)
		if len(pcm)%m.Channels() != 0 {
			if err == nil {
				t.Fatal("odd sample count accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(codes) != len(pcm)/m.Channels()/spf {
			t.Fatalf("%d frames for %d samples", len(codes), len(pcm))
		}
		for _, fr := range codes {
			if len(fr) != m.NumQuantizers() {
				t.Fatalf("frame of %d codes", len(fr))
			}
			for _, c := range fr {
				if c < 0 || c >= m.CodebookSize() {
					t.Fatalf("code %d", c)
				}
			}
		}
	})
}
