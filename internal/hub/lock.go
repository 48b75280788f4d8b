package hub

import (
	"context"
	"fmt"
	"github.com/nanovox/nanovox/internal/flock"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// lockPoll is how often a held lock is retried; polling keeps waits cancellable.
const lockPoll = 20 * time.Millisecond

// procLocks serializes goroutines of this process on a lock path, so correctness
// does not depend on how the file system implements the OS-level lock (on some
// network file systems flock is per process).
var procLocks = struct {
	sync.Mutex
	m map[string]*procLock
}{m: make(map[string]*procLock)}

type procLock struct {
	ch   chan struct{}
	refs int
}

// lockFile takes an exclusive lock on path (created if needed), the same
// advisory lock huggingface_hub takes (flock on .locks/models--org--name/{etag}.lock),
// waiting until it is free or ctx is done. The returned function releases it.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	procLocks.Lock()
	pl := procLocks.m[path]
	if pl == nil {
		pl = &procLock{ch: make(chan struct{}, 1)}
		procLocks.m[path] = pl
	}
	pl.refs++
	procLocks.Unlock()
	release := func() {
		procLocks.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(procLocks.m, path)
		}
		procLocks.Unlock()
	}
	select {
	case pl.ch <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	unlockProc := func() { <-pl.ch; release() }

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		unlockProc()
		return nil, fmt.Errorf("create lock directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		unlockProc()
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		ok, err := flock.TryLock(f)
		if err != nil {
			f.Close()
			unlockProc()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			break
		}
		if err := sleepCtx(ctx, lockPoll); err != nil {
			f.Close()
			unlockProc()
			return nil, err
		}
	}
	return func() {
		flock.Unlock(f)
		f.Close()
		unlockProc()
	}, nil
}
