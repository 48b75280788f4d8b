package engine_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/mossnano"
	"github.com/nanovox/nanovox/internal/tensor"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(tensor.PoolWorkerFunction))
}

var (
	famOnce sync.Once
	fam     *mossnano.Family
	refPCM  []float32
)

func family(t *testing.T) *mossnano.Family {
	t.Helper()
	famOnce.Do(func() {
		f, err := mossnano.Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", mossnano.Options{KeepBF16: true})
		if err != nil {
			panic(err)
		}
		fam = f
		b, err := os.ReadFile("../../testdata/tiny-a/ref.wav")
		if err != nil {
			panic(err)
		}
		ref, err := audio.PrepareReference(b, audio.Options{})
		if err != nil {
			panic(err)
		}
		refPCM = ref.Interleaved()
	})
	return fam
}

func params(f engine.Family, seed uint64, frames int) engine.Params {
	p := f.DefaultParams()
	p.Seed = seed
	if frames > 0 {
		p.MaxFrames = frames
		p.IgnoreEOS = true
	}
	return p
}

// alone runs a request without the scheduler.
func alone(t *testing.T, f engine.Family, text string, p engine.Params) []float32 {
	t.Helper()
	v, err := f.EncodeReference(context.Background(), refPCM)
	if err != nil {
		t.Fatal(err)
	}
	j, err := f.Prepare(context.Background(), v, nil, text, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []float32
	if err := engine.Run(context.Background(), f, j, func(o engine.Output) error {
		out = append(out, o.Samples...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// drain reads a stream to the end and returns its samples and chunk sizes.
func drain(t *testing.T, s *engine.Stream) ([]float32, []int) {
	t.Helper()
	var out []float32
	var sizes []int
	for {
		c, err := s.Next(context.Background())
		if err == io.EOF {
			return out, sizes
		}
		if err != nil {
			t.Errorf("Next: %v", err)
			return out, sizes
		}
		out = append(out, c.Samples...)
		sizes = append(sizes, len(c.Samples)/2)
	}
}

// stepOnly hides the family's Pipeline, so the engine takes its sequential
// path (generate and decode in one Step).
type stepOnly struct{ *mossnano.Family }

func (f stepOnly) NewStepper() engine.Stepper {
	return struct{ engine.Stepper }{f.Family.NewStepper()}
}

// TestStreamsEqualAloneAndEachOther: four concurrent streams, scheduled
// together, each equal its request run alone, through the pipelined loop
// (decode of step t beside generation of step t+1) and the sequential one.
func TestStreamsEqualAloneAndEachOther(t *testing.T) {
	f32 := family(t)
	// The bfloat16 and int8 modes' products and caches are row-independent
	// too.
	bf16, err := mossnano.Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", mossnano.Options{Matmul: tensor.BF16})
	if err != nil {
		t.Fatal(err)
	}
	i8, err := mossnano.Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", mossnano.Options{Matmul: tensor.Int8})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*mossnano.Family{"f32": f32, "bf16": bf16, "int8": i8} {
		t.Run(name, func(t *testing.T) { testStreamsEqualAloneAndEachOther(t, f) })
	}
}

func testStreamsEqualAloneAndEachOther(t *testing.T, f *mossnano.Family) {
	texts := []string{"Hello world. This is a tiny test.", "A second, longer request with a few more words in it.", "Third one.", "Fourth and final request, spoken here."}
	want := make([][]float32, len(texts))
	for i, txt := range texts {
		want[i] = alone(t, f, txt, params(f, uint64(i+1), 0))
		if seq := alone(t, stepOnly{f}, txt, params(f, uint64(i+1), 0)); !cmp.Equal(seq, want[i]) {
			t.Errorf("request %d: Run without the pipeline differs from Run with it", i)
		}
	}
	if _, ok := f.NewStepper().(engine.Pipeline); !ok {
		t.Fatal("mossnano's stepper is not an engine.Pipeline")
	}
	for _, tc := range []struct {
		name string
		fam  engine.Family
	}{{"pipelined", f}, {"sequential", stepOnly{f}}} {
		t.Run(tc.name, func(t *testing.T) {
			e := engine.New(tc.fam, engine.Config{MaxStreams: 4, Queue: 4, PrefixCacheBytes: 1 << 20})
			defer e.Close(context.Background())
			got := make([][]float32, len(texts))
			var wg sync.WaitGroup
			for i, txt := range texts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, err := e.Submit(context.Background(), engine.Request{Text: txt, RefPCM: refPCM, RefKey: "ref", Params: params(f, uint64(i+1), 0), FirstChunkFrames: 1, ChunkFrames: 3})
					if err != nil {
						t.Error(err)
						return
					}
					defer s.Close()
					got[i], _ = drain(t, s)
				}()
			}
			wg.Wait()
			for i := range texts {
				if !cmp.Equal(want[i], got[i]) {
					t.Errorf("request %d: scheduled output (%d samples) differs from running alone (%d samples)", i, len(got[i]), len(want[i]))
				}
			}
			if n, _, hits, misses := e.PrefixCacheStats(); n != 1 || misses != 1 || hits != 3 {
				t.Errorf("prefix cache: %d entries, %d hits, %d misses; want 1, 3, 1", n, hits, misses)
			}
		})
	}
}

func TestChunkSizes(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 1})
	defer e.Close(context.Background())
	s, err := e.Submit(context.Background(), engine.Request{Text: "Hello world.", RefPCM: refPCM, Params: params(f, 1, 10), FirstChunkFrames: 1, ChunkFrames: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, sizes := drain(t, s)
	// 10 frames of 3840 samples: 1 frame first, then 4, 4, and the rest (1).
	if want := []int{3840, 4 * 3840, 4 * 3840, 3840}; !cmp.Equal(sizes, want) {
		t.Fatalf("chunk sizes %v, want %v", sizes, want)
	}
	if st := s.Stats(); st.Frames != 10 || st.AudioSeconds != 0.8 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBackpressure: a stream whose reader stops sits out with at most one
// pending chunk (and one frame in the pipeline) while another stream runs
// to completion.
func TestBackpressure(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 2})
	defer e.Close(context.Background())
	stalled, err := e.Submit(context.Background(), engine.Request{Text: "Stalled reader.", RefPCM: refPCM, Params: params(f, 1, 200), FirstChunkFrames: 1, ChunkFrames: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	// Take one chunk, then stop reading.
	if _, err := stalled.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	other, err := e.Submit(context.Background(), engine.Request{Text: "Other reader.", RefPCM: refPCM, Params: params(f, 2, 60), FirstChunkFrames: 1, ChunkFrames: 2})
	if err != nil {
		t.Fatal(err)
	}
	samples, _ := drain(t, other)
	other.Close()
	if len(samples) != 60*3840*2 {
		t.Fatalf("other stream got %d samples, want %d", len(samples), 60*3840*2)
	}
	stalled.Close()
	// The stalled stream produced its first chunk (1 frame), one pending
	// chunk (2 frames), and at most the one frame it generated while that
	// chunk's last frame was being decoded (the pipeline): nothing more.
	if st := stalled.Stats(); st.Frames > 4 {
		t.Fatalf("stalled stream generated %d frames; backpressure allows 4", st.Frames)
	}
}

func TestCancelFreesSlot(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 1, Queue: 0})
	defer e.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	s, err := e.Submit(ctx, engine.Request{Text: "Long one.", RefPCM: refPCM, Params: params(f, 1, 300), FirstChunkFrames: 1, ChunkFrames: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The only slot is taken and there is no queue.
	if _, err := e.Submit(context.Background(), engine.Request{Text: "x", RefPCM: refPCM, Params: params(f, 1, 1)}); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("second submit: %v, want ErrBusy", err)
	}
	cancel()
	for {
		_, err := s.Next(context.Background())
		if errors.Is(err, context.Canceled) {
			break
		}
		if err != nil {
			t.Fatalf("after cancel: %v", err)
		}
	}
	if st := s.Stats(); st.Frames >= 300 {
		t.Fatalf("cancelled stream ran to the end (%d frames)", st.Frames)
	}
	// The slot is free again at once.
	s2, err := e.Submit(context.Background(), engine.Request{Text: "Next.", RefPCM: refPCM, Params: params(f, 1, 2)})
	if err != nil {
		t.Fatalf("submit after cancel: %v", err)
	}
	drain(t, s2)
	s2.Close()
}

func TestQueue(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 1, Queue: 1})
	defer e.Close(context.Background())
	first, err := e.Submit(context.Background(), engine.Request{Text: "First.", RefPCM: refPCM, Params: params(f, 1, 20), FirstChunkFrames: 1, ChunkFrames: 1})
	if err != nil {
		t.Fatal(err)
	}
	queued := make(chan *engine.Stream)
	go func() {
		s, err := e.Submit(context.Background(), engine.Request{Text: "Queued.", RefPCM: refPCM, Params: params(f, 2, 3)})
		if err != nil {
			t.Error(err)
		}
		queued <- s
	}()
	// Wait until the second request is queued, then a third is refused.
	for {
		if _, q := e.Active(); q == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := e.Submit(context.Background(), engine.Request{Text: "x", RefPCM: refPCM, Params: params(f, 1, 1)}); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("third submit: %v, want ErrBusy", err)
	}
	// A queued request whose client leaves gives up its place.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Submit(ctx, engine.Request{Text: "x", RefPCM: refPCM, Params: params(f, 1, 1)}); err == nil {
		t.Fatal("cancelled submit succeeded")
	}
	drain(t, first)
	first.Close()
	s := <-queued
	if s == nil {
		t.Fatal("queued request failed")
	}
	if out, _ := drain(t, s); len(out) != 3*3840*2 {
		t.Fatalf("queued stream: %d samples", len(out))
	}
	s.Close()
}

func TestCloseDrainsThenRefuses(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 2})
	s, err := e.Submit(context.Background(), engine.Request{Text: "In flight.", RefPCM: refPCM, Params: params(f, 1, 30), FirstChunkFrames: 1, ChunkFrames: 5})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int)
	go func() {
		out, _ := drain(t, s)
		got <- len(out)
	}()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := <-got; n != 30*3840*2 {
		t.Fatalf("in-flight stream got %d samples during shutdown, want all %d", n, 30*3840*2)
	}
	s.Close()
	if _, err := e.Submit(context.Background(), engine.Request{Text: "late", RefPCM: refPCM, Params: params(f, 1, 1)}); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
	// Close with an expired deadline cancels what runs.
	e2 := engine.New(f, engine.Config{MaxStreams: 1})
	s2, err := e2.Submit(context.Background(), engine.Request{Text: "Cut.", RefPCM: refPCM, Params: params(f, 1, 300), FirstChunkFrames: 1, ChunkFrames: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e2.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("close with deadline: %v", err)
	}
	for {
		if _, err := s2.Next(context.Background()); err != nil {
			if err == io.EOF {
				t.Fatal("stream ran to the end despite the shutdown deadline")
			}
			break
		}
	}
	s2.Close()
}

func TestInputErrorsBeforeAudio(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 1})
	defer e.Close(context.Background())
	for _, req := range []engine.Request{
		{Text: "   ", RefPCM: refPCM, Params: params(f, 1, 0)},
		{Text: "hi", Params: params(f, 1, 0)},
		{Text: "hi", RefPCM: refPCM[:100], Params: params(f, 1, 0)},
		{Text: "hi", RefPCM: refPCM, Params: engine.Params{}},
	} {
		_, err := e.Submit(context.Background(), req)
		if !engine.IsInputError(err) {
			t.Errorf("%+v: err %v, want an InputError", req.Text, err)
		}
	}
	// The slot was released every time.
	s, err := e.Submit(context.Background(), engine.Request{Text: "ok", RefPCM: refPCM, Params: params(f, 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	s.Close()
}

// TestRampChunks: with RampChunks the first chunk is one frame, later chunks
// never exceed the interval, and all the audio arrives.
func TestRampChunks(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 1})
	defer e.Close(context.Background())
	s, err := e.Submit(context.Background(), engine.Request{Text: "Hello world.", RefPCM: refPCM, Params: params(f, 1, 40), FirstChunkFrames: 1, ChunkFrames: 7, RampChunks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, sizes := drain(t, s)
	if len(out) != 40*3840*2 || sizes[0] != 3840 {
		t.Fatalf("%d samples, chunk sizes %v", len(out), sizes)
	}
	for _, n := range sizes {
		if n > 7*3840 || n%3840 != 0 {
			t.Fatalf("chunk of %d samples: over the interval or not whole frames (%v)", n, sizes)
		}
	}
	// A fast model races ahead of real time, so the ramp reaches chunks
	// larger than one frame.
	if len(sizes) >= 40 {
		t.Fatalf("no chunk grew past one frame: %v", sizes)
	}
}

// slowPrepare delays Prepare of requests whose text starts with "slow",
// telling entered when it starts.
type slowPrepare struct {
	*mossnano.Family
	entered chan struct{}
	delay   time.Duration
}

func (f slowPrepare) Prepare(ctx context.Context, v *engine.Voice, p engine.Prefix, text string, params engine.Params) (engine.Job, error) {
	if strings.HasPrefix(text, "slow") {
		close(f.entered)
		time.Sleep(f.delay)
	}
	return f.Family.Prepare(ctx, v, p, text, params)
}

type stepSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (o *stepSizes) SlotsChanged(int, int)                        {}
func (o *stepSizes) FirstAudio(time.Duration)                     {}
func (o *stepSizes) StreamDone(time.Duration, float64, int, bool) {}
func (o *stepSizes) Step(n int, _ time.Duration) {
	o.mu.Lock()
	o.sizes = append(o.sizes, n)
	o.mu.Unlock()
}

// TestArrivalsCoalesce: a request whose job is still being prepared when
// another becomes a stream joins the same first step (their prompts are
// computed together), instead of stalling the first one's second chunk.
func TestArrivalsCoalesce(t *testing.T) {
	f := family(t)
	v, err := f.EncodeReference(context.Background(), refPCM)
	if err != nil {
		t.Fatal(err)
	}
	obs := &stepSizes{}
	sf := slowPrepare{Family: f, entered: make(chan struct{}), delay: 4 * time.Millisecond}
	e := engine.New(sf, engine.Config{MaxStreams: 2, Observer: obs})
	defer e.Close(context.Background())
	slow := make(chan *engine.Stream, 1)
	go func() {
		s, err := e.Submit(context.Background(), engine.Request{Text: "slow request.", Voice: v, Params: params(f, 1, 3)})
		if err != nil {
			t.Error(err)
		}
		slow <- s
	}()
	<-sf.entered
	fast, err := e.Submit(context.Background(), engine.Request{Text: "fast request.", Voice: v, Params: params(f, 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, fast)
	fast.Close()
	if s := <-slow; s != nil {
		drain(t, s)
		s.Close()
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.sizes) == 0 || obs.sizes[0] != 2 {
		t.Fatalf("step sizes %v: the first step should hold both requests", obs.sizes)
	}
}

// slowSteps makes every step of the family take at least per·n for n
// streams (sequential path), like a machine that steps few streams in real
// time.
type slowSteps struct {
	*mossnano.Family
	per time.Duration
}

type slowStepper struct {
	engine.Stepper
	per time.Duration
}

func (f slowSteps) NewStepper() engine.Stepper {
	return slowStepper{struct{ engine.Stepper }{f.Family.NewStepper()}, f.per}
}

func (s slowStepper) Step(jobs []engine.Job) ([]engine.Output, error) {
	time.Sleep(s.per * time.Duration(len(jobs)))
	return s.Stepper.Step(jobs)
}

// TestRealTimeLimit: with steps costing 25 ms per stream and 80 ms frames,
// at most two streams step together when the real-time limit is on (three
// would be expected to take 75 ms, over the 60 ms the limit rises within);
// the other requests wait in the queue and all complete. Without it, all six step together (and
// each would play slower than real time).
func TestRealTimeLimit(t *testing.T) {
	f := family(t)
	v, err := f.EncodeReference(context.Background(), refPCM)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []bool{true, false} {
		obs := &stepSizes{}
		e := engine.New(slowSteps{f, 25 * time.Millisecond}, engine.Config{MaxStreams: 6, Queue: 6, RealTime: rt, Observer: obs})
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := e.Submit(context.Background(), engine.Request{Text: "Hello there.", Voice: v, Params: params(f, uint64(i), 6)})
				if err != nil {
					t.Error(err)
					return
				}
				defer s.Close()
				inf := f.Info()
				if out, _ := drain(t, s); len(out) != 6*inf.SamplesPerFrame*inf.Channels {
					t.Errorf("request %d: %d samples, want 6 frames", i, len(out))
				}
			}()
		}
		wg.Wait()
		limit := e.StreamLimit()
		e.Close(context.Background())
		obs.mu.Lock()
		most := 0
		for _, n := range obs.sizes {
			most = max(most, n)
		}
		obs.mu.Unlock()
		switch {
		case rt && (most > 2 || limit > 2):
			t.Errorf("real-time limit: %d streams stepped together (limit %d), want at most 2", most, limit)
		case !rt && most != 6:
			t.Errorf("no limit: at most %d streams stepped together, want 6", most)
		}
	}
}

// countRelease counts the engine's ReleaseIdle calls on the real family.
type countRelease struct {
	*mossnano.Family
	n atomic.Int32
}

func (f *countRelease) ReleaseIdle() {
	f.n.Add(1)
	f.Family.ReleaseIdle()
}

// TestIdleRelease: the engine drops the family's kept buffers once it has
// been idle for Config.IdleRelease after a stream, once per idle period,
// and never before anything ran; each time it hands the freed memory back
// to the system at once (debug.FreeOSMemory), not minutes later.
func TestIdleRelease(t *testing.T) {
	var freed atomic.Int32
	defer engine.SetFreeOSMemory(func() { freed.Add(1) })()
	f := &countRelease{Family: family(t)}
	e := engine.New(f, engine.Config{MaxStreams: 2, Queue: 2, IdleRelease: 30 * time.Millisecond})
	defer e.Close(context.Background())
	time.Sleep(150 * time.Millisecond)
	if n := f.n.Load(); n != 0 {
		t.Fatalf("released %d times before any stream", n)
	}
	for round := int32(1); round <= 2; round++ {
		s, err := e.Submit(context.Background(), engine.Request{Text: "Idle test.", RefPCM: refPCM, Params: params(f, 1, 3)})
		if err != nil {
			t.Fatal(err)
		}
		drain(t, s)
		s.Close()
		deadline := time.Now().Add(5 * time.Second)
		for freed.Load() < round && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n, fr := f.n.Load(), freed.Load(); n != round || fr != round {
			t.Fatalf("round %d: released %d times and freed OS memory %d times, want %d", round, n, fr, round)
		}
		time.Sleep(150 * time.Millisecond) // idle on: no second release
		if n, fr := f.n.Load(), freed.Load(); n != round || fr != round {
			t.Fatalf("round %d: released %d times and freed OS memory %d times while idle, want %d", round, n, fr, round)
		}
	}
}

// cancelInPrepare cancels the request's context once Prepare has begun
// (the client leaves right after submitting) and records what the
// family's Prepare returned.
type cancelInPrepare struct {
	*mossnano.Family
	cancel context.CancelFunc
	err    chan error
}

func (f cancelInPrepare) Prepare(ctx context.Context, v *engine.Voice, p engine.Prefix, text string, params engine.Params) (engine.Job, error) {
	f.cancel()
	j, err := f.Family.Prepare(ctx, v, p, text, params)
	f.err <- err
	return j, err
}

// TestCancelDuringPrepareFreesSlot: a pathological text (4,096 emoji,
// normalized and split) whose client leaves during Prepare makes Prepare
// return context.Canceled, and the only slot is free for the next request.
func TestCancelDuringPrepareFreesSlot(t *testing.T) {
	f := family(t)
	ctx, cancel := context.WithCancel(context.Background())
	cf := cancelInPrepare{Family: f, cancel: cancel, err: make(chan error, 2)}
	e := engine.New(cf, engine.Config{MaxStreams: 1, Queue: 0})
	defer e.Close(context.Background())
	_, err := e.Submit(ctx, engine.Request{Text: strings.Repeat("😀", 4096), RefPCM: refPCM, Params: params(f, 1, 0)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("submit: %v, want context.Canceled", err)
	}
	if err := <-cf.err; !errors.Is(err, context.Canceled) {
		t.Fatalf("Prepare returned %v, want context.Canceled", err)
	}
	// The slot is free: with one slot and no queue, ErrBusy would say not.
	cf.cancel = func() {}
	s, err := e.Submit(context.Background(), engine.Request{Text: "Next.", RefPCM: refPCM, Params: params(f, 1, 2)})
	if err != nil {
		t.Fatalf("submit after cancel: %v", err)
	}
	drain(t, s)
	s.Close()
}
