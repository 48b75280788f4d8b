package engine

import (
	"context"
)

// Warm runs one short request through every stage — reference encoding,
// prefix, text preparation, a few batched steps, decoding — so that what a
// first request would otherwise pay for (page faults on fresh weights and
// buffers, lazily built tables, the kernels' thread pool) is paid before
// the server reports ready. ref is a reference clip in the family's format
// (a second of any signal will do). It takes a slot like any request and
// leaves nothing in the caches.
func (e *Engine) Warm(ctx context.Context, ref []float32) error {
	p := e.fam.DefaultParams()
	p.MaxFrames = 3
	p.IgnoreEOS = true
	return e.run(ctx, Request{Text: "Warm up, 1 2 3.", RefPCM: ref, Params: p, FirstChunkFrames: 1, ChunkFrames: 1})
}

// WarmPrefix computes a voice's prompt prefix into the prefix cache ahead of
// its first request (a saved voice at start-up). It takes no slot; with the
// cache disabled or a voice without a key it does nothing.
func (e *Engine) WarmPrefix(ctx context.Context, v *Voice) error {
	if v.Key == "" || !e.prefixes.enabled() {
		return nil
	}
	_, err := e.prefixes.get(ctx, v.Key, func(ctx context.Context) (Prefix, error) { return e.fam.NewPrefix(ctx, v) }, nil)
	return err
}

// PrefixCacheFree returns the prefix cache's unused budget in bytes.
func (e *Engine) PrefixCacheFree() int64 {
	_, used, _, _ := e.prefixes.stats()
	return e.prefixes.budget - used
}
