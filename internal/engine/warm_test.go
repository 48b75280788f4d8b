package engine_test

import (
	"context"
	"testing"

	"github.com/nanovox/nanovox/internal/engine"
)

// TestWarm: the warm-up request runs the whole path on the real family and
// leaves the slot free; WarmPrefix fills the cache so that the voice's
// first request is a hit.
func TestWarm(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 1, PrefixCacheBytes: 64 << 20})
	defer e.Close(context.Background())
	if err := e.Warm(context.Background(), refPCM); err != nil {
		t.Fatal(err)
	}
	if a, q := e.Active(); a != 0 || q != 0 {
		t.Fatalf("after Warm: %d active, %d queued", a, q)
	}
	v, err := e.Encode(context.Background(), refPCM)
	if err != nil {
		t.Fatal(err)
	}
	v.Key = "voice:warm"
	free := e.PrefixCacheFree()
	if err := e.WarmPrefix(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	entries, _, hits, misses := e.PrefixCacheStats()
	if entries != 1 || misses != 1 || hits != 0 || e.PrefixCacheFree() >= free {
		t.Fatalf("after WarmPrefix: %d entries, %d hits, %d misses, free %d of %d", entries, hits, misses, e.PrefixCacheFree(), free)
	}
	s, err := e.Submit(context.Background(), engine.Request{Text: "Hi there.", Voice: v, Params: params(f, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	s.Close()
	if _, _, hits, _ := e.PrefixCacheStats(); hits != 1 {
		t.Fatalf("the first request after WarmPrefix was not a cache hit (%d hits)", hits)
	}
}
