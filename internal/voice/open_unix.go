//go:build unix

package voice

import (
	"os"

	"golang.org/x/sys/unix"
)

// openVoiceFile opens a voice file for reading without following a
// symbolic link in its last element (O_NOFOLLOW: a link fails to open), so
// a link cannot make the store read a file outside its directory, and
// without blocking (O_NONBLOCK: opening a FIFO does not wait for a writer;
// the caller refuses anything but a regular file before reading).
func openVoiceFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
}
