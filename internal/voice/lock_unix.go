//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package voice

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// haveOSLock reports that other processes are excluded too.
const haveOSLock = true

// tryLockFile takes an exclusive flock on f without blocking; false means
// another open file holds it.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
