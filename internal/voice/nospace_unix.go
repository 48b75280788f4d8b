//go:build unix

package voice

import (
	"errors"

	"golang.org/x/sys/unix"
)

// isNoSpace reports a full file system or an exhausted disk quota.
func isNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}
