package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/mossnano"
	"github.com/nanovox/nanovox/internal/tensor"
	"github.com/nanovox/nanovox/internal/voice"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(tensor.PoolWorkerFunction))
}

var (
	famOnce sync.Once
	fam     *mossnano.Family
	refWAV  []byte
	refB64  string
)

func loadFamily(t testing.TB) *mossnano.Family {
	t.Helper()
	famOnce.Do(func() {
		f, err := mossnano.Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", mossnano.Options{KeepBF16: true})
		if err != nil {
			panic(err)
		}
		fam = f
		refWAV, err = os.ReadFile("../../testdata/tiny-a/ref.wav")
		if err != nil {
			panic(err)
		}
		refB64 = base64.StdEncoding.EncodeToString(refWAV)
	})
	return fam
}

// testServer is a real HTTP server over the tiny fixture model.
type testServer struct {
	*httptest.Server
	eng    *engine.Engine
	srv    *Server
	voices *voice.Store
	steps  *stepCounter
}

// stepCounter wraps Metrics to count scheduler steps (frames) as they happen.
type stepCounter struct {
	*Metrics
	mu      sync.Mutex
	steps   int
	atFirst []int // steps done when each stream's first chunk was taken
}

func (s *stepCounter) FirstAudio(d time.Duration) {
	s.mu.Lock()
	s.atFirst = append(s.atFirst, s.steps)
	s.mu.Unlock()
	s.Metrics.FirstAudio(d)
}

func (s *stepCounter) Step(n int, d time.Duration) {
	s.mu.Lock()
	s.steps++
	s.mu.Unlock()
	s.Metrics.Step(n, d)
}

func (s *stepCounter) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steps
}

// endless makes the model ignore its stop decision, so a request yields
// exactly max_new_frames frames per text chunk: long streams on demand.
type endless struct{ engine.Family }

func (e endless) Prepare(ctx context.Context, v *engine.Voice, p engine.Prefix, text string, params engine.Params) (engine.Job, error) {
	params.IgnoreEOS = true
	return e.Family.Prepare(ctx, v, p, text, params)
}

type serverOpts struct {
	ignoreEOS bool
	engine    engine.Config
	cfg       Config
	dataDir   string
	// listener wraps the test listener (e.g. small socket buffers).
	listener func(net.Listener) net.Listener
}

func newTestServer(t *testing.T, o serverOpts) *testServer {
	t.Helper()
	f := loadFamily(t)
	m := &stepCounter{Metrics: NewMetrics()}
	if o.engine.MaxStreams == 0 {
		o.engine.MaxStreams = 4
		o.engine.Queue = 4
	}
	o.engine.Observer = m
	o.engine.PrefixCacheBytes = 8 << 20
	var fm engine.Family = f
	if o.ignoreEOS {
		fm = endless{f}
	}
	eng := engine.New(fm, o.engine)
	m.ObserveStreamLimit(eng.StreamLimit)
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	vs, _, err := voice.Open(o.dataDir, voice.Options{Model: "moss_tts_nano/8codes"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.cfg
	cfg.ModelID = "tiny-a"
	cfg.Aliases = DefaultAliases
	cfg.Voices = vs
	cfg.VoiceModel = "moss_tts_nano/8codes"
	if cfg.IdleWriteTimeout == 0 {
		cfg.IdleWriteTimeout = 5 * time.Second
	}
	srv := New(eng, cfg, m.Metrics)
	hs := httptest.NewUnstartedServer(srv.Handler())
	if o.listener != nil {
		hs.Listener = o.listener(hs.Listener)
	}
	hs.Start()
	ts := &testServer{Server: hs, eng: eng, srv: srv, voices: vs, steps: m}
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		eng.Close(context.Background())
	})
	return ts
}

// body builds a speech request with the inline reference unless voice is set.
// body is a speech request with fields overridden (nil deletes one). Unless
// fields name a response_format, it asks for raw PCM when streaming and WAV
// otherwise, which the tests decode themselves; the server's own default
// (mp3) is tested on its own.
func body(fields map[string]any) []byte {
	m := map[string]any{"input": "Hello world. This is a tiny test.", "voice": map[string]any{"ref_audio": refB64}, "seed": 7}
	if _, ok := fields["response_format"]; !ok {
		if fields["stream"] == true || fields["stream_format"] != nil {
			m["response_format"] = "pcm"
		} else {
			m["response_format"] = "wav"
		}
	}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return b
}

func (ts *testServer) post(t *testing.T, path string, b []byte, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, r *http.Response) []byte {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type errBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decodeErr(t *testing.T, b []byte) errBody {
	t.Helper()
	var e errBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error body: %q", b)
	}
	return e
}

func pcmSamples(b []byte) []int16 {
	s := make([]int16, len(b)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return s
}

func TestSpeechBufferedAndStreamedAgree(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	long := "The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the clocks were striking thirteen."
	wavResp := ts.post(t, "/v1/audio/speech", body(map[string]any{"input": long}))
	wav := readAll(t, wavResp)
	if wavResp.StatusCode != 200 || wavResp.Header.Get("Content-Type") != "audio/wav" {
		t.Fatalf("status %d %s: %s", wavResp.StatusCode, wavResp.Header.Get("Content-Type"), wav)
	}
	for h, want := range map[string]string{"X-Audio-Sample-Rate": "48000", "X-Audio-Channels": "1", "X-Audio-Sample-Format": "s16le", "X-Seed": "7"} {
		if got := wavResp.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if string(wav[:4]) != "RIFF" || binary.LittleEndian.Uint32(wav[40:]) != uint32(len(wav)-44) || binary.LittleEndian.Uint32(wav[24:]) != 48000 || binary.LittleEndian.Uint16(wav[22:]) != 1 {
		t.Fatalf("bad WAV header % x", wav[:44])
	}
	pcm := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"input": long, "response_format": "pcm"})))
	if !bytes.Equal(pcm, wav[44:]) {
		t.Fatal("pcm differs from the WAV's data")
	}
	sresp := ts.post(t, "/v1/audio/speech", body(map[string]any{"input": long, "stream": true}))
	streamed := readAll(t, sresp)
	if sresp.Header.Get("Content-Type") != "audio/pcm" || len(sresp.TransferEncoding) == 0 || sresp.TransferEncoding[0] != "chunked" {
		t.Fatalf("stream headers: %v %v", sresp.Header, sresp.TransferEncoding)
	}
	assertClose(t, "streamed vs buffered", pcmSamples(streamed), pcmSamples(pcm), 4)
	// A WAV stream: header with unknown sizes, then the same PCM.
	ws := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"input": long, "stream": true, "response_format": "wav", "streaming_interval": 0.2})))
	if string(ws[:4]) != "RIFF" || binary.LittleEndian.Uint32(ws[40:]) != 0xFFFFFFFF {
		t.Fatalf("wav stream header % x", ws[:44])
	}
	assertClose(t, "wav stream", pcmSamples(ws[44:]), pcmSamples(pcm), 4)
	// SSE: base64 deltas that concatenate to the same PCM, then done with usage.
	sse := ts.post(t, "/v1/audio/speech", body(map[string]any{"input": long, "stream_format": "sse"}))
	if ct := sse.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("sse content type %q", ct)
	}
	var got []byte
	var done map[string]any
	for _, ev := range strings.Split(strings.TrimSpace(string(readAll(t, sse))), "\n\n") {
		var m map[string]any
		if !strings.HasPrefix(ev, "data: ") || json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &m) != nil {
			t.Fatalf("bad SSE event %q", ev)
		}
		switch m["type"] {
		case "speech.audio.delta":
			b, err := base64.StdEncoding.DecodeString(m["audio"].(string))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b...)
		case "speech.audio.done":
			done = m
		default:
			t.Fatalf("unexpected event %v", m)
		}
	}
	assertClose(t, "sse", pcmSamples(got), pcmSamples(pcm), 4)
	usage, _ := done["usage"].(map[string]any)
	if usage == nil || usage["output_tokens"].(float64) < 1 || usage["output_tokens"].(float64) > float64(len(pcm)/2/3840) || usage["input_tokens"].(float64) <= 0 {
		t.Fatalf("done event %v (frames %d)", done, len(pcm)/2/3840)
	}
}

func assertClose(t *testing.T, what string, got, want []int16, lsb int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := int(got[i]) - int(want[i]); d > lsb || d < -lsb {
			t.Fatalf("%s: sample %d differs by %d LSB", what, i, d)
		}
	}
}

// TestFirstChunkBeforeGenerationEnds measures by frames: when the first
// bytes of a stream arrive, the scheduler has run only a few steps of the
// many the request needs.
func TestFirstChunkBeforeGenerationEnds(t *testing.T) {
	ts := newTestServer(t, serverOpts{ignoreEOS: true})
	resp := ts.post(t, "/v1/audio/speech", body(map[string]any{"stream": true, "max_new_frames": 50}))
	defer resp.Body.Close()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(resp.Body)
	total := ts.steps.count()
	ts.steps.mu.Lock()
	atFirst := ts.steps.atFirst
	ts.steps.mu.Unlock()
	// The first chunk (one frame, see engine.TestChunkSizes) is ready after
	// step 1. Backpressure lets the engine make at most one more chunk (7
	// frames at the default 0.5 s interval) before the writer takes it, so
	// it is taken after at most 8 of the 50 steps, however the goroutines
	// are scheduled.
	if len(atFirst) != 1 || atFirst[0] > 8 || total < 50 || len(rest)+2 != 50*3840*2 {
		t.Fatalf("first chunk taken by the writer after %v steps of %d (%d bytes); want at most 8", atFirst, total, len(rest)+2)
	}
	t.Logf("first chunk left after step %d of %d", atFirst[0], total)
}

func TestSeededRepeatabilityUnderLoad(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	req := body(map[string]any{"input": "Seeded output must not depend on other streams.", "response_format": "pcm", "seed": 99})
	want := readAll(t, ts.post(t, "/v1/audio/speech", req))
	var wg sync.WaitGroup
	results := make([][]byte, 3)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i < 3 {
				results[i] = readAll(t, ts.post(t, "/v1/audio/speech", req))
				return
			}
			readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"input": "Background noise request number " + fmt.Sprint(i), "stream": true, "seed": i})))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if !bytes.Equal(r, want) {
			t.Fatalf("run %d with other streams differs from the run alone", i)
		}
	}
}

func engineCfg(streams, queue int) engine.Config {
	return engine.Config{MaxStreams: streams, Queue: queue}
}
