//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package hub

import "os"

// tryLock has no OS-level lock on this platform; the in-process lock still
// serializes this process's downloads.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockOS(*os.File) {}
