package engine

import (
	"context"
	"errors"
	"testing"
)

type sizedPrefix int64

func (p sizedPrefix) Bytes() int64 { return int64(p) }

// TestPrefixCacheCancel: the request computing a prefix leaves; the one
// waiting for it computes it itself instead of failing, and a waiter that
// leaves stops waiting while the computation goes on.
func TestPrefixCacheCancel(t *testing.T) {
	c := newPrefixCache(1 << 20)
	ctx1, cancel1 := context.WithCancel(context.Background())
	started := make(chan struct{})
	err1 := make(chan error, 1)
	go func() {
		_, err := c.get(ctx1, "k", func(ctx context.Context) (Prefix, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}, nil)
		err1 <- err
	}()
	<-started

	// A waiter that leaves while waiting gets its own context's error.
	ctx3, cancel3 := context.WithCancel(context.Background())
	if _, err := c.get(ctx3, "k", nil, func(wait func()) { cancel3(); wait() }); !errors.Is(err, context.Canceled) {
		t.Fatalf("leaving waiter: %v, want context.Canceled", err)
	}

	// A waiter that stays computes the prefix once the first one leaves.
	type result struct {
		p   Prefix
		err error
	}
	res := make(chan result, 1)
	waiting := make(chan struct{})
	computed := false
	go func() {
		p, err := c.get(context.Background(), "k", func(context.Context) (Prefix, error) {
			computed = true
			return sizedPrefix(10), nil
		}, func(f func()) {
			select {
			case <-waiting:
			default:
				close(waiting) // the first slow call is the wait
			}
			f()
		})
		res <- result{p, err}
	}()
	<-waiting
	cancel1()
	if err := <-err1; !errors.Is(err, context.Canceled) {
		t.Fatalf("computing request: %v, want context.Canceled", err)
	}
	r := <-res
	if r.err != nil || r.p != sizedPrefix(10) || !computed {
		t.Fatalf("waiter got %v, %v (computed %v), want its own prefix", r.p, r.err, computed)
	}
	if p, err := c.get(context.Background(), "k", nil, nil); err != nil || p != sizedPrefix(10) {
		t.Fatalf("cached: %v, %v", p, err)
	}
}
