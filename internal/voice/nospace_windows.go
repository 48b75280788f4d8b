//go:build windows

package voice

import (
	"errors"

	"golang.org/x/sys/windows"
)

// isNoSpace reports a full disk or an exhausted disk quota.
func isNoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL) ||
		errors.Is(err, windows.ERROR_DISK_QUOTA_EXCEEDED)
}
