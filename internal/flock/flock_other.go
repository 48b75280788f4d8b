//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package flock

import "os"

// Supported reports whether TryLock excludes other processes on this platform.
const Supported = false

// TryLock has no OS-level lock on this platform; the in-process lock still
// serializes this process's downloads.
func TryLock(*os.File) (bool, error) { return true, nil }

// Unlock releases a lock taken by TryLock.
func Unlock(*os.File) {}
