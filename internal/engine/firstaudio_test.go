package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/mossnano"
)

// orderFamily records the order in which the engine's pipeline generates
// and renders steps.
type orderFamily struct {
	*mossnano.Family
	mu     sync.Mutex
	events []string
	// slowFirst, if set, lengthens the first generation and the first
	// render by these durations, as a burst's first step of many prompts.
	slowFirst [2]time.Duration
}

func (f *orderFamily) record(ev string) {
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
}

func (f *orderFamily) NewStepper() engine.Stepper {
	return &orderStepper{f: f, pl: f.Family.NewStepper().(engine.Pipeline)}
}

type orderStepper struct {
	f  *orderFamily
	pl engine.Pipeline
	n  int // steps generated
}

type orderStep struct {
	n int
	g any
}

func (s *orderStepper) Step(jobs []engine.Job) ([]engine.Output, error) {
	g, err := s.Generate(jobs)
	if err != nil {
		return nil, err
	}
	return s.Render(g)
}

func (s *orderStepper) Generate(jobs []engine.Job) (any, error) {
	s.n++
	s.f.record(fmt.Sprintf("generate %d start", s.n))
	if s.n == 1 {
		time.Sleep(s.f.slowFirst[0])
	}
	g, err := s.pl.Generate(jobs)
	s.f.record(fmt.Sprintf("generate %d end", s.n))
	return orderStep{s.n, g}, err
}

func (s *orderStepper) Render(generated any) ([]engine.Output, error) {
	st := generated.(orderStep)
	s.f.record(fmt.Sprintf("render %d start", st.n))
	if st.n == 1 {
		time.Sleep(s.f.slowFirst[1])
	}
	outs, err := s.pl.Render(st.g)
	s.f.record(fmt.Sprintf("render %d end", st.n))
	return outs, err
}

// runOrdered runs one request through an engine on of and checks its audio
// against the sequential run's; it returns the position of each recorded
// event.
func runOrdered(t *testing.T, of *orderFamily) (at func(ev string) int, events []string) {
	t.Helper()
	e := engine.New(of, engine.Config{MaxStreams: 1})
	defer e.Close(context.Background())
	p := params(of.Family, 5, 6)
	s, err := e.Submit(context.Background(), engine.Request{Text: "Hello world.", RefPCM: refPCM, Params: p, FirstChunkFrames: 1, ChunkFrames: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, s)
	s.Close()
	if want := alone(t, stepOnly{of.Family}, "Hello world.", p); len(got) != len(want) || !slices.Equal(got, want) {
		t.Errorf("audio differs from the sequential run's (%d and %d samples)", len(got), len(want))
	}
	of.mu.Lock()
	events = slices.Clone(of.events)
	of.mu.Unlock()
	return func(ev string) int {
		i := slices.Index(events, ev)
		if i < 0 {
			t.Fatalf("no %q in %v", ev, events)
		}
		return i
	}, events
}

// TestFirstFrameRenderedAlone: the step that carries a new stream's first
// frame is rendered before the next step is generated (nothing else
// competes with the client's first audio for the cores); the stream's
// audio is the same as without the pipeline.
func TestFirstFrameRenderedAlone(t *testing.T) {
	at, events := runOrdered(t, &orderFamily{Family: family(t)})
	if at("render 1 end") > at("generate 2 start") {
		t.Errorf("the first frame was rendered beside the next step: %v", events)
	}
}

// TestLongFirstStepOverlapsRender: when the step that made the first frames
// took longer than a frame's duration (a burst's prompts), its render runs
// beside the next generation as every later one does: rendered alone, the
// streams' second frame would come a whole generation plus a render after
// their first, and the one-frame first chunk would play out before it. The
// audio is the same either way.
func TestLongFirstStepOverlapsRender(t *testing.T) {
	f := family(t)
	frame := time.Duration(f.Info().FrameDuration() * float64(time.Second))
	at, events := runOrdered(t, &orderFamily{Family: f, slowFirst: [2]time.Duration{frame + frame/4, 100 * time.Millisecond}})
	// Render 1 sleeps 100 ms: beside generation 2, that starts first.
	if at("generate 2 start") > at("render 1 end") {
		t.Errorf("a first step longer than a frame was rendered alone: %v", events)
	}
}
