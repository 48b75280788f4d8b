package mossnano

import (
	"context"
	"runtime"
	"testing"

	"github.com/nanovox/nanovox/internal/engine"
)

// TestKeptBuffers: a finished request leaves its decoder and KV cache, and
// a finished encode its buffers, for the next one (also through garbage
// collections, unlike a sync.Pool), the next request takes them, and
// ReleaseIdle drops them all but one request's: a decoder, two KV caches
// (the generation's and an inline clip's prefix), one prefix scratch and
// one set of encode buffers.
func TestKeptBuffers(t *testing.T) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := make([][]int, 20)
	for i := range ref {
		ref[i] = make([]int, f.LM.Config.NVQ)
	}
	prepare := func() engine.Job {
		p := f.DefaultParams()
		p.MaxFrames, p.IgnoreEOS = 3, true
		j, err := f.Prepare(context.Background(), &engine.Voice{Codes: ref}, nil, "Kept buffers.", p)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	runJob := func(j engine.Job) {
		if err := engine.Run(context.Background(), f, j, func(engine.Output) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	run := func() { runJob(prepare()) }
	run()
	if _, err := f.EncodeReference(context.Background(), make([]float32, 3*f.Codec.SamplesPerFrame()*f.Codec.Channels())); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	if n := f.Codec.IdleBuffers(); n != 1 {
		t.Fatalf("after an encode and two collections: %d encode buffers kept, want 1", n)
	}
	if d, c := f.decoders.Len(), f.LM.IdleBuffers(); d != 1 || c == 0 {
		t.Fatalf("after a request: %d decoders, %d LM buffers kept; want 1 and some", d, c)
	}
	c := f.LM.IdleBuffers()
	run() // reuses them: nothing new is kept
	if d, c2 := f.decoders.Len(), f.LM.IdleBuffers(); d != 1 || c2 != c {
		t.Fatalf("after a second request: %d decoders, %d LM buffers kept; want 1 and %d", d, c2, c)
	}
	// Three requests at once leave three of everything.
	jobs := []engine.Job{prepare(), prepare(), prepare()}
	for _, j := range jobs {
		runJob(j)
	}
	if d, c := f.decoders.Len(), f.LM.IdleBuffers(); d != 3 || c < 4 {
		t.Fatalf("after three requests at once: %d decoders, %d LM buffers kept; want 3 and at least 4 (three generation caches and a prefix cache)", d, c)
	}
	f.ReleaseIdle()
	if d, c, e := f.decoders.Len(), f.LM.IdleBuffers(), f.Codec.IdleBuffers(); d != 1 || c > 3 || c < 2 || e != 1 {
		t.Fatalf("after ReleaseIdle: %d decoders, %d LM buffers, %d encode buffers kept; want 1, 2 or 3, 1", d, c, e)
	}
	run() // works with what was kept
	if d := f.decoders.Len(); d != 1 {
		t.Fatalf("after a request on the kept buffers: %d decoders, want 1", d)
	}
}
