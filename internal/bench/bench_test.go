package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/mossnano"
)

// tinyFamily loads the tiny-a fixture and its reference clip.
func tinyFamily(t *testing.T) (*mossnano.Family, *audio.Reference) {
	t.Helper()
	f, err := mossnano.Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", mossnano.Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("../../testdata/tiny-a/ref.wav")
	ref, err := audio.PrepareReference(b, audio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f, ref
}

func TestRun(t *testing.T) {
	f, ref := tinyFamily(t)
	rs, err := Run(context.Background(), f, Config{
		Text: "Hello world.", RefPCM: ref.Interleaved(), Frames: 9, Streams: []int{1, 3}, Runs: 2,
		Voices: []string{"saved", "inline"}, Modes: []string{"buffered", "streamed"}, FirstChunkFrames: 1, ChunkFrames: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 {
		t.Fatalf("%d results, want 2 voices × 2 modes × 2 stream counts", len(rs))
	}
	for _, r := range rs {
		if r.Requests != 2*r.Streams || math.Abs(r.AudioPerReq-9*0.08) > 1e-9 || r.FramesPerS <= 0 || r.RTF.P50 <= 0 || r.TTFAms.P50 <= 0 || r.TTFAms.P95 < r.TTFAms.P50 {
			t.Errorf("implausible result %+v", r)
		}
		if r.StreamLimit != r.Streams {
			t.Errorf("without the real-time limit every slot is used: limit %d for %d streams", r.StreamLimit, r.Streams)
		}
		if r.Mode == "buffered" && r.JitterMs != (Percentiles{}) {
			t.Errorf("buffered results have one chunk, so no gaps: %+v", r)
		}
	}
	j, _ := json.Marshal(rs[0])
	for _, key := range []string{`"mode"`, `"streams"`, `"voice"`, `"ttfa_ms":{"p50"`, `"rtf":{"p50"`, `"jitter_ms":{"p50"`, `"underruns"`, `"frames_per_s"`, `"peak_rss_mb"`, `"stream_limit"`} {
		if !bytes.Contains(j, []byte(key)) {
			t.Errorf("JSON lacks %s: %s", key, j)
		}
	}
	var buf bytes.Buffer
	WriteTable(&buf, rs)
	if strings.Count(buf.String(), "\n") != 9 {
		t.Errorf("table:\n%s", buf.String())
	}
}

// prefixCounter counts the prompt prefixes a family computes.
type prefixCounter struct {
	engine.Family
	n atomic.Int32
}

func (f *prefixCounter) NewPrefix(ctx context.Context, v *engine.Voice) (engine.Prefix, error) {
	f.n.Add(1)
	return f.Family.NewPrefix(ctx, v)
}

// TestRunDistinct: with "distinct" voices every concurrent stream speaks
// with its own saved voice, so the engine computes (and caches) one prompt
// prefix per stream, where "saved" computes one for all.
// TestRunFormats encodes every chunk; a bad format is an error, not a
// silent raw run.
func TestRunFormats(t *testing.T) {
	f, ref := tinyFamily(t)
	for _, format := range []string{"mp3", "opus"} {
		rs, err := Run(context.Background(), f, Config{
			Text: "Hello world.", RefPCM: ref.Interleaved(), Frames: 6, Streams: []int{2}, Runs: 1,
			Voices: []string{"saved"}, Modes: []string{"streamed"}, FirstChunkFrames: 1, ChunkFrames: 2, Format: format,
		})
		if err != nil || len(rs) != 1 || rs[0].TTFAms.P50 <= 0 || math.Abs(rs[0].AudioPerReq-6*0.08) > 1e-9 {
			t.Fatalf("%s: %+v, %v", format, rs, err)
		}
	}
	if _, err := Run(context.Background(), f, Config{Text: "Hi.", RefPCM: ref.Interleaved(), Frames: 2, Streams: []int{1}, Voices: []string{"inline"}, Modes: []string{"buffered"}, Format: "ogg"}); err == nil {
		t.Fatal("format ogg ran")
	}
}

// coldCounter counts the requests a family prepares and its idle releases.
type coldCounter struct {
	*mossnano.Family
	prepared, released atomic.Int32
}

func (f *coldCounter) Prepare(ctx context.Context, v *engine.Voice, p engine.Prefix, text string, params engine.Params) (engine.Job, error) {
	f.prepared.Add(1)
	return f.Family.Prepare(ctx, v, p, text, params)
}

func (f *coldCounter) ReleaseIdle() {
	f.released.Add(1)
	f.Family.ReleaseIdle()
}

// TestRunCold: a cold configuration runs no warm-up round and releases the
// family's kept buffers before every measured round (and once before the
// configuration, as every configuration does); a warm one runs the warm-up
// round of the same streams and releases only before the configuration.
// Config.Measuring is called once, after the unmeasured requests.
func TestRunCold(t *testing.T) {
	f, ref := tinyFamily(t)
	for _, c := range []struct {
		cold                           bool
		prepared, released, unmeasured int32
	}{
		// One request warms the saved voice's prefix; 2 rounds × 2 streams.
		{cold: true, prepared: 1 + 4, released: 1 + 2, unmeasured: 1},
		// And the warm-up round of 2 streams.
		{cold: false, prepared: 1 + 2 + 4, released: 1, unmeasured: 1 + 2},
	} {
		fam := &coldCounter{Family: f}
		var calls, before int32
		rs, err := Run(context.Background(), fam, Config{
			Text: "Hello world.", RefPCM: ref.Interleaved(), Frames: 4, Streams: []int{2}, Runs: 2,
			Voices: []string{"saved"}, Modes: []string{"streamed"}, Cold: c.cold,
			Measuring: func() { calls++; before = fam.prepared.Load() },
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 || before != c.unmeasured {
			t.Errorf("cold %v: Measuring called %d times, after %d requests; want once, after %d", c.cold, calls, before, c.unmeasured)
		}
		if len(rs) != 1 || rs[0].Cold != c.cold || rs[0].Requests != 4 || rs[0].FramesPerS <= 0 {
			t.Fatalf("cold %v: results %+v", c.cold, rs)
		}
		if p, r := fam.prepared.Load(), fam.released.Load(); p != c.prepared || r != c.released {
			t.Errorf("cold %v: %d requests prepared, %d idle releases; want %d, %d", c.cold, p, r, c.prepared, c.released)
		}
		j, _ := json.Marshal(rs[0])
		if got := bytes.Contains(j, []byte(`"cold":true`)); got != c.cold {
			t.Errorf("cold %v: JSON %s", c.cold, j)
		}
	}
}

func TestRunDistinct(t *testing.T) {
	f, ref := tinyFamily(t)
	for _, c := range []struct {
		voice    string
		prefixes int32
	}{{"distinct", 3}, {"saved", 1}} {
		fam := &prefixCounter{Family: f}
		rs, err := Run(context.Background(), fam, Config{
			Text: "Hello world.", RefPCM: ref.Interleaved(), Frames: 5, Streams: []int{3}, Runs: 2,
			Voices: []string{c.voice}, Modes: []string{"streamed"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Voice != c.voice || rs[0].Requests != 6 || rs[0].FramesPerS <= 0 || math.Abs(rs[0].AudioPerReq-5*0.08) > 1e-9 {
			t.Fatalf("%s: results %+v", c.voice, rs)
		}
		if got := fam.n.Load(); got != c.prefixes {
			t.Errorf("%s voices, 3 streams: %d prefixes computed, want %d", c.voice, got, c.prefixes)
		}
	}
}

func TestPercentiles(t *testing.T) {
	p := pct([]float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	if p.P50 != 10 || p.P95 != 19 {
		t.Fatalf("pct = %+v", p)
	}
	if pct(nil) != (Percentiles{}) {
		t.Fatal("empty")
	}
}

// TestRunRealTimeCalibrates: with the real-time limit on, the engine of
// each configuration is calibrated first, as serve does, and the result
// says where the limit started.
func TestRunRealTimeCalibrates(t *testing.T) {
	f, ref := tinyFamily(t)
	rs, err := Run(context.Background(), f, Config{
		Text: "Hello world.", RefPCM: ref.Interleaved(), Frames: 3, Streams: []int{2}, Runs: 1, RealTime: true,
		Voices: []string{"saved"}, Modes: []string{"streamed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].StartLimit < 1 || rs[0].StartLimit > 2 || rs[0].StreamLimit < 1 || rs[0].StreamLimit > 2 {
		t.Fatalf("results %+v", rs)
	}
}
