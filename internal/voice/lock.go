package voice

import (
	"fmt"
	"github.com/nanovox/nanovox/internal/flock"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// lockFileName is the advisory lock writers hold, inside the voices directory.
const lockFileName = ".lock"

// lockPoll is how often a held lock is retried.
const lockPoll = 5 * time.Millisecond

// procLocks holds one mutex per lock path, so that Stores of this process
// exclude each other even where the OS lock is per process (flock emulated
// with fcntl on some network file systems).
var procLocks sync.Map // string → *sync.Mutex

// lockDir takes the exclusive lock of the voices directory dir, waiting up
// to timeout (0: try once). ok is false if the lock stayed held by someone
// else; err reports a failure to use the lock file at all.
func lockDir(dir string, timeout time.Duration) (unlock func(), ok bool, err error) {
	path := filepath.Join(dir, lockFileName)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	m, _ := procLocks.LoadOrStore(path, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	deadline := time.Now().Add(timeout)
	for !mu.TryLock() {
		if !time.Now().Before(deadline) {
			return nil, false, nil
		}
		time.Sleep(lockPoll)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		mu.Unlock()
		return nil, false, fmt.Errorf("open lock file: %w", err)
	}
	for {
		got, err := flock.TryLock(f)
		if err != nil {
			f.Close()
			mu.Unlock()
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		if got {
			break
		}
		if !time.Now().Before(deadline) {
			f.Close()
			mu.Unlock()
			return nil, false, nil
		}
		time.Sleep(lockPoll)
	}
	return func() {
		flock.Unlock(f)
		f.Close()
		mu.Unlock()
	}, true, nil
}

// haveOSLock reports that other processes are excluded too.
const haveOSLock = flock.Supported
