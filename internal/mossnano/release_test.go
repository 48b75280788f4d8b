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
// ReleaseIdle drops them.
func TestKeptBuffers(t *testing.T) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := make([][]int, 20)
	for i := range ref {
		ref[i] = make([]int, f.LM.Config.NVQ)
	}
	run := func() {
		p := f.DefaultParams()
		p.MaxFrames, p.IgnoreEOS = 3, true
		j, err := f.Prepare(context.Background(), &engine.Voice{Codes: ref}, nil, "Kept buffers.", p)
		if err != nil {
			t.Fatal(err)
		}
		if err := engine.Run(context.Background(), f, j, func(engine.Output) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
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
	f.ReleaseIdle()
	if d, c, e := f.decoders.Len(), f.LM.IdleBuffers(), f.Codec.IdleBuffers(); d != 0 || c != 0 || e != 0 {
		t.Fatalf("after ReleaseIdle: %d decoders, %d LM buffers, %d encode buffers kept", d, c, e)
	}
	run() // works from scratch again
}
