package voice

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/nanovox/nanovox/internal/flock"
)

// lockFileName is the advisory lock writers hold, inside the voices directory.
const lockFileName = ".lock"

// lockPoll is how often a held lock is retried.
const lockPoll = 5 * time.Millisecond

// lockDir takes the exclusive lock of the voices directory dir, waiting up
// to timeout (0: try once). ok is false if the lock stayed held by someone
// else; err reports a failure to use the lock file at all.
func lockDir(dir string, timeout time.Duration) (unlock func(), ok bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	unlock, err = flock.Lock(ctx, filepath.Join(dir, lockFileName), lockPoll)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return unlock, true, nil
}

// haveOSLock reports that other processes are excluded too.
const haveOSLock = flock.Supported
