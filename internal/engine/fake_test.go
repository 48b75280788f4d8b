package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// fakeFamily is an engine.Family without a model: a job speaks Params.MaxFrames
// frames of fakeFrameSamples mono samples, each sample holding the job's
// seed and the frame's index (seed*1000 + frame), so a test can tell whose
// audio reached which stream and in what order. Its stepper records every
// batch and can be told to fail or to block, which makes the scheduler's
// behaviour (routing, limits, cancellation, faults) testable in
// milliseconds.
type fakeFamily struct {
	mu      sync.Mutex
	batches [][]uint64 // the seeds stepped together, per Step
	failAt  int        // Step call that fails (1-based; 0 never)
	gate    chan struct{}
}

const fakeFrameSamples = 4

func (f *fakeFamily) Info() engine.Info {
	return engine.Info{Name: "fake", ModelType: "fake", SampleRate: 50, Channels: 1, SamplesPerFrame: fakeFrameSamples, CodesPerFrame: 1}
}

func (f *fakeFamily) DefaultParams() engine.Params {
	return engine.Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, MaxFrames: 10, MaxTextTokens: 10}
}

func (f *fakeFamily) EncodeReference(ctx context.Context, pcm []float32) (*engine.Voice, error) {
	return &engine.Voice{Codes: [][]int{{len(pcm)}}}, nil
}

func (f *fakeFamily) NewPrefix(ctx context.Context, v *engine.Voice) (engine.Prefix, error) {
	return nil, nil
}

func (f *fakeFamily) Prepare(ctx context.Context, v *engine.Voice, prefix engine.Prefix, text string, p engine.Params) (engine.Job, error) {
	if text == "" {
		return nil, &engine.InputError{Msg: "empty text"}
	}
	return &fakeJob{seed: p.Seed, frames: p.MaxFrames}, nil
}

func (f *fakeFamily) NewStepper() engine.Stepper { return &fakeStepper{f: f} }
func (f *fakeFamily) Close() error               { return nil }

type fakeJob struct {
	seed       uint64
	frames, at int
	buf        []float32
}

func (j *fakeJob) Chunks() []string { return []string{"fake"} }
func (j *fakeJob) InputTokens() int { return 1 }
func (j *fakeJob) Done() bool       { return j.at >= j.frames }

type fakeStepper struct{ f *fakeFamily }

func (s *fakeStepper) Step(jobs []engine.Job) ([]engine.Output, error) {
	f := s.f
	f.mu.Lock()
	var seeds []uint64
	for _, j := range jobs {
		seeds = append(seeds, j.(*fakeJob).seed)
	}
	f.batches = append(f.batches, seeds)
	n, gate := len(f.batches), f.gate
	fail := f.failAt == n
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail {
		return nil, errors.New("injected step fault")
	}
	outs := make([]engine.Output, len(jobs))
	for i, jj := range jobs {
		j := jj.(*fakeJob)
		if j.Done() {
			panic(fmt.Sprintf("job %d stepped after it was done", j.seed))
		}
		j.buf = j.buf[:0]
		for range fakeFrameSamples {
			j.buf = append(j.buf, float32(j.seed*1000+uint64(j.at)))
		}
		j.at++
		outs[i] = engine.Output{Samples: j.buf, Frame: []int{j.at}, Done: j.Done(), ChunkEnd: j.Done()}
	}
	return outs, nil
}

func fakeRequest(f *fakeFamily, seed uint64, frames int) engine.Request {
	p := f.DefaultParams()
	p.Seed, p.MaxFrames = seed, frames
	return engine.Request{Text: "x", Voice: &engine.Voice{Codes: [][]int{{1}}}, Params: p, FirstChunkFrames: 1, ChunkFrames: 2}
}

// readAll reads a stream to its end and returns its samples.
func readAll(s *engine.Stream) ([]float32, error) {
	var out []float32
	for {
		c, err := s.Next(context.Background())
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, c.Samples...)
	}
}

// TestFakeRouting runs streams of different lengths at once: each gets
// exactly its own frames, in order, however the scheduler batched them.
func TestFakeRouting(t *testing.T) {
	f := &fakeFamily{}
	e := engine.New(f, engine.Config{MaxStreams: 4})
	defer e.Close(context.Background())
	lengths := []int{1, 7, 30, 64}
	var wg sync.WaitGroup
	for i, n := range lengths {
		seed := uint64(i + 1)
		s, err := e.Submit(context.Background(), fakeRequest(f, seed, n))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			got, err := readAll(s)
			if err != nil {
				t.Errorf("stream %d: %v", seed, err)
				return
			}
			if len(got) != n*fakeFrameSamples {
				t.Errorf("stream %d: %d samples, want %d", seed, len(got), n*fakeFrameSamples)
				return
			}
			for k, v := range got {
				if want := float32(seed*1000 + uint64(k/fakeFrameSamples)); v != want {
					t.Errorf("stream %d sample %d = %v, want %v", seed, k, v, want)
					return
				}
			}
			if st := s.Stats(); st.Frames != n {
				t.Errorf("stream %d: Stats.Frames %d, want %d", seed, st.Frames, n)
			}
		}()
	}
	wg.Wait()
	// Batching happened: some step advanced more than one stream.
	f.mu.Lock()
	defer f.mu.Unlock()
	most := 0
	for _, b := range f.batches {
		most = max(most, len(b))
	}
	if most < 2 {
		t.Errorf("no step batched two streams (%d steps)", len(f.batches))
	}
}

// TestFakeLimits fills the slots and the queue: the next request is refused
// at once, and a finished stream's slot goes to the queued one.
func TestFakeLimits(t *testing.T) {
	f := &fakeFamily{}
	e := engine.New(f, engine.Config{MaxStreams: 2, Queue: 1})
	defer e.Close(context.Background())
	var held []*engine.Stream
	for seed := uint64(1); seed <= 2; seed++ {
		s, err := e.Submit(context.Background(), fakeRequest(f, seed, 50))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
	}
	queued := make(chan *engine.Stream, 1)
	go func() {
		s, err := e.Submit(context.Background(), fakeRequest(f, 3, 3))
		if err != nil {
			t.Error(err)
		}
		queued <- s
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if a, q := e.Active(); a == 2 && q == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third request never queued")
		}
	}
	if _, err := e.Submit(context.Background(), fakeRequest(f, 4, 1)); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("fourth submit: %v, want ErrBusy", err)
	}
	held[0].Close() // cancels it and frees its slot
	s := <-queued
	if s == nil {
		t.FailNow()
	}
	got, err := readAll(s)
	if err != nil || len(got) != 3*fakeFrameSamples {
		t.Fatalf("queued stream: %d samples, %v", len(got), err)
	}
	s.Close()
	held[1].Close()
}

// TestFakeCancelWithinOneStep cancels a stream while a step is running: once
// the step returns, the stream ends with the context's error and its slot
// is free.
func TestFakeCancelWithinOneStep(t *testing.T) {
	f := &fakeFamily{gate: make(chan struct{})}
	e := engine.New(f, engine.Config{MaxStreams: 1})
	defer e.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	s, err := e.Submit(ctx, fakeRequest(f, 1, 1000))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f.gate <- struct{}{} // the first step
	if _, err := s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()
	close(f.gate) // let every later step run
	for {
		_, err := s.Next(context.Background())
		if errors.Is(err, context.Canceled) {
			break
		}
		if err != nil {
			t.Fatalf("after cancel: %v, want context.Canceled", err)
		}
	}
	if st := s.Stats(); st.Frames > 10 {
		t.Errorf("cancelled stream went on for %d frames", st.Frames)
	}
	s2, err := e.Submit(context.Background(), fakeRequest(f, 2, 2))
	if err != nil {
		t.Fatalf("slot not freed: %v", err)
	}
	if _, err := readAll(s2); err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

// TestFakeStepFault: a failing step ends the streams in it with the error;
// the engine goes on serving new requests.
func TestFakeStepFault(t *testing.T) {
	f := &fakeFamily{failAt: 3}
	e := engine.New(f, engine.Config{MaxStreams: 2})
	defer e.Close(context.Background())
	s, err := e.Submit(context.Background(), fakeRequest(f, 1, 20))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(s); err == nil || !strings.Contains(err.Error(), "injected step fault") {
		t.Fatalf("stream in a failing step: %v, want the step's error", err)
	}
	s.Close()
	s2, err := e.Submit(context.Background(), fakeRequest(f, 2, 5))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(s2); err != nil || len(got) != 5*fakeFrameSamples {
		t.Fatalf("after the fault: %d samples, %v", len(got), err)
	}
	s2.Close()
	if _, err := e.Submit(context.Background(), engine.Request{Voice: &engine.Voice{}, Params: f.DefaultParams(), FirstChunkFrames: 1, ChunkFrames: 1}); !engine.IsInputError(err) {
		t.Fatalf("empty text: %v, want an input error", err)
	}
}
