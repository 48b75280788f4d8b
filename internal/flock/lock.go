package flock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// procLocks serializes the goroutines of this process on a lock path, so
// correctness does not depend on how the file system implements the OS-level
// lock (on some network file systems flock is per process).
var procLocks = struct {
	sync.Mutex
	m map[string]*procLock
}{m: make(map[string]*procLock)}

type procLock struct {
	ch   chan struct{}
	refs int
}

// Lock takes an exclusive lock on the file at path (it and its directory are
// created if needed): first among the goroutines of this process, then,
// with TryLock, among processes. It retries every poll until the lock is
// free or ctx is done, and then returns ctx's error; a ctx that is already
// done still gets one try. The returned function releases the lock.
func Lock(ctx context.Context, path string, poll time.Duration) (unlock func(), err error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
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
	default:
		select {
		case pl.ch <- struct{}{}:
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
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
		ok, err := TryLock(f)
		if err != nil {
			f.Close()
			unlockProc()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			break
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			unlockProc()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return func() {
		Unlock(f)
		f.Close()
		unlockProc()
	}, nil
}
