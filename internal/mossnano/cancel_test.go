package mossnano

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// countdownCtx is a context that becomes canceled at its n-th Err call:
// the client leaves in the middle of the work, at a point the test picks,
// without timing.
type countdownCtx struct {
	context.Context // never done; only for Value
	mu              sync.Mutex
	n, calls        int
	done            chan struct{}
}

func newCountdown(n int) *countdownCtx {
	return &countdownCtx{Context: context.Background(), n: n, done: make(chan struct{})}
}

func (c *countdownCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *countdownCtx) Done() <-chan struct{}       { return c.done }

func (c *countdownCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls == c.n {
		close(c.done)
	}
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// TestPrepareCanceledMidway: Prepare of a pathological text checks its
// context all along (normalizing, splitting, building chunks) and returns
// context.Canceled as soon as the context is done, at whichever check.
func TestPrepareCanceledMidway(t *testing.T) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := [][]int{make([]int, f.LM.Config.NVQ)}
	text := strings.Repeat("😀", 4096)
	p := f.DefaultParams()

	// How many checks a whole Prepare makes.
	all := newCountdown(1 << 30)
	if _, err := f.Prepare(all, &engine.Voice{Codes: ref}, nil, text, p); err != nil {
		t.Fatal(err)
	}
	if all.calls < 100 {
		t.Fatalf("Prepare of 4,096 emoji checked its context %d times, want many (every budget piece)", all.calls)
	}
	for _, n := range []int{1, 2, all.calls / 2, all.calls - 1} {
		ctx := newCountdown(n)
		_, err := f.Prepare(ctx, &engine.Voice{Codes: ref}, nil, text, p)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("canceled at check %d: %v, want context.Canceled", n, err)
		}
		if engine.IsInputError(err) {
			t.Errorf("canceled at check %d: an input error (%v)", n, err)
		}
		if ctx.calls != n {
			t.Errorf("canceled at check %d: went on to check %d", n, ctx.calls)
		}
	}
}

// TestEncodeReferenceCanceled: encoding stops between encoder stages and
// between the layers of a stage.
func TestEncodeReferenceCanceled(t *testing.T) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]float32, 8*f.Codec.SamplesPerFrame()*f.Codec.Channels())
	all := newCountdown(1 << 30)
	if _, err := f.EncodeReference(all, pcm); err != nil {
		t.Fatal(err)
	}
	for n := 1; n < all.calls; n++ {
		ctx := newCountdown(n)
		if _, err := f.EncodeReference(ctx, pcm); !errors.Is(err, context.Canceled) {
			t.Errorf("canceled at check %d: %v, want context.Canceled", n, err)
		}
		// One more check may follow the one that found it done: the
		// encoder's, after a stage stopped.
		if ctx.calls > n+1 {
			t.Errorf("canceled at check %d: went on to check %d", n, ctx.calls)
		}
	}
}

// TestNewPrefixCanceled: the prefill of a long reference checks its
// context between the transformer's layers and stops at the first check
// that finds it done.
func TestNewPrefixCanceled(t *testing.T) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := make([][]int, 200)
	for i := range ref {
		ref[i] = make([]int, f.LM.Config.NVQ)
	}
	v := &engine.Voice{Codes: ref}
	all := newCountdown(1 << 30)
	if _, err := f.NewPrefix(all, v); err != nil {
		t.Fatal(err)
	}
	if all.calls < f.LM.Config.GPT2.NLayer {
		t.Fatalf("the prefill checked its context %d times, want at least once per layer (%d)", all.calls, f.LM.Config.GPT2.NLayer)
	}
	for n := 1; n < all.calls; n++ {
		ctx := newCountdown(n)
		if _, err := f.NewPrefix(ctx, v); !errors.Is(err, context.Canceled) {
			t.Errorf("canceled at check %d: %v, want context.Canceled", n, err)
		}
		// One more check may follow the one that found it done: the
		// caller's, after the pass stopped.
		if ctx.calls > n+1 {
			t.Errorf("canceled at check %d: went on to check %d", n, ctx.calls)
		}
	}
}

// BenchmarkPreparePathological times Prepare (normalizing and splitting)
// of inputs at the server's default limit of 4,096 characters that
// defeat the splitter's punctuation steps.
func BenchmarkPreparePathological(b *testing.B) {
	f, err := Load("../../testdata/tiny-a/lm", "../../testdata/tiny-a/codec", Options{KeepBF16: true})
	if err != nil {
		b.Fatal(err)
	}
	ref := [][]int{make([]int, f.LM.Config.NVQ)}
	texts := map[string]string{
		"emoji":  strings.Repeat("😀", 4096),
		"words":  strings.Repeat("lorem ipsum ", 4096/12),
		"digits": strings.Repeat("1234567 ", 4096/8),
	}
	for name, text := range texts {
		b.Run(name, func(b *testing.B) {
			p := f.DefaultParams()
			for b.Loop() {
				if _, err := f.Prepare(context.Background(), &engine.Voice{Codes: ref}, nil, text, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
