package codec_test

import (
	"os"
	"sync"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/mossnano/testmodel"
)

// full is the full-size random-weight codec (the release's shapes), written
// once per test binary on first use.
var full struct {
	once sync.Once
	dir  string
	m    *codec.Model
	err  error
}

func fullModel(b testing.TB) *codec.Model {
	b.Helper()
	full.once.Do(func() {
		full.dir, full.err = os.MkdirTemp("", "nanovox-codec-bench")
		if full.err != nil {
			return
		}
		if full.err = testmodel.WriteCodec(full.dir, testmodel.Nano100M, testmodel.OpenMOSS, testmodel.Float32, 1); full.err != nil {
			return
		}
		full.m, full.err = codec.Load(full.dir, codec.Options{})
	})
	if full.err != nil {
		b.Fatal(full.err)
	}
	return full.m
}

func TestMain(m *testing.M) {
	code := m.Run()
	if full.dir != "" {
		os.RemoveAll(full.dir)
	}
	os.Exit(code)
}

// BenchmarkDecoderStep is the streaming decode of one frame on the full-size
// codec. "start" is the first second of a stream (windows filling up);
// "full-context" is a stream whose every attention window is full (10 s in),
// the steady-state worst case.
func BenchmarkDecoderStep(b *testing.B) {
	m := fullModel(b)
	frames := testFrames(m, 125, 1)
	b.Run("start", func(b *testing.B) {
		d := m.NewDecoder()
		var out []float32
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%12 == 0 {
				d.Reset()
			}
			out, _ = d.Step(out[:0], frames[i%12:i%12+1])
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)*m.Config().FrameRate(), "RTF")
	})
	b.Run("full-context", func(b *testing.B) {
		d := m.NewDecoder()
		// 125 frames = 10 s fill the largest window (500 positions at 50 Hz).
		out, err := d.Step(nil, frames)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			out, _ = d.Step(out[:0], frames[i%125:i%125+1])
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)*m.Config().FrameRate(), "RTF")
	})
}

// BenchmarkDecodeWhole12 is a whole decode of 12 frames (0.96 s).
func BenchmarkDecodeWhole12(b *testing.B) {
	m := fullModel(b)
	frames := testFrames(m, 12, 2)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Decode(frames); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode5s encodes 5 s of 48 kHz stereo.
func BenchmarkEncode5s(b *testing.B) {
	m := fullModel(b)
	wav := testWave(m, 5*m.SampleRate(), 3)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Encode(wav); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecoderStepTiny is the per-frame streaming cost on the tiny
// fixture codec (mostly overhead: a guard against per-step allocations).
func BenchmarkDecoderStepTiny(b *testing.B) {
	m := fixtureModel(b, "tiny-a")
	frames := testFrames(m, 64, 1)
	d := m.NewDecoder()
	var out []float32
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		out, _ = d.Step(out[:0], frames[i%64:i%64+1])
		i++
	}
}

// BenchmarkBatchStep decodes one frame for each of 8 full-context streams:
// through one Batch step, and as 8 separate Decoder steps. ns/op is per
// step of all streams.
func BenchmarkBatchStep(b *testing.B) {
	m := fullModel(b)
	const streams = 8
	frames := testFrames(m, 125, 1)
	decs := make([]*codec.Decoder, streams)
	for i := range decs {
		decs[i] = m.NewDecoder()
		if _, err := decs[i].Step(nil, frames); err != nil {
			b.Fatal(err)
		}
	}
	step := make([][]int, streams)
	dst := make([][]float32, streams)
	b.Run("batch", func(b *testing.B) {
		bt := m.NewBatch()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			for s := range step {
				step[s] = frames[(i+s)%125]
				dst[s] = dst[s][:0]
			}
			if err := bt.Step(decs, step, dst); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(streams*b.N)/b.Elapsed().Seconds(), "frames/s")
	})
	b.Run("separate", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			for s, d := range decs {
				out, err := d.Step(dst[s][:0], frames[(i+s)%125:(i+s)%125+1])
				if err != nil {
					b.Fatal(err)
				}
				dst[s] = out
			}
			i++
		}
		b.ReportMetric(float64(streams*b.N)/b.Elapsed().Seconds(), "frames/s")
	})
}
