package hub

import (
	"context"
	"time"

	"github.com/nanovox/nanovox/internal/flock"
)

// lockPoll is how often a held lock is retried; polling keeps waits cancellable.
const lockPoll = 20 * time.Millisecond

// lockFile takes an exclusive lock on path (created if needed), the same
// advisory lock huggingface_hub takes (flock on .locks/models--org--name/{etag}.lock),
// waiting until it is free or ctx is done. The returned function releases it.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	return flock.Lock(ctx, path, lockPoll)
}
