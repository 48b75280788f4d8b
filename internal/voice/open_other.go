//go:build !unix

package voice

import (
	"errors"
	"io/fs"
	"os"
)

// openVoiceFile opens a voice file for reading, refusing a symbolic link
// (or other reparse point) in its last element. Without O_NOFOLLOW the check
// and the open are two steps; a link swapped in between is followed.
func openVoiceFile(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errLink}
	}
	return os.Open(path)
}

// errLink is why openVoiceFile refused a link.
var errLink = errors.New("a symbolic link, which is not followed")
