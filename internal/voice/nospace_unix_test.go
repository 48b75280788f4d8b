//go:build unix

package voice

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSaveNoSpace: a write that fails because the disk is full or the
// quota exhausted is a *SpaceError (ErrNoSpace), any other I/O error is
// not, and either way the old voice is kept. The fault is injected through
// the store's write seam; TestSaveDiskFull uses a real full file system.
func TestSaveNoSpace(t *testing.T) {
	for _, tc := range []struct {
		errno   unix.Errno
		noSpace bool
	}{
		{unix.ENOSPC, true},
		{unix.EDQUOT, true},
		{unix.EIO, false},
	} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir, Options{})
			old := addT(t, s, testVoice("a", 2, 16, 1), false)
			if old != nil {
				t.Fatal("first Add replaced something")
			}
			first, _ := s.Get("a")
			s.write = func(dir, name string, data []byte) error {
				return &fs.PathError{Op: "write", Path: filepath.Join(dir, ".tmp-"+name), Err: tc.errno}
			}
			_, _, err := s.Save(testVoice("a", 3, 16, 2), true)
			var se *SpaceError
			if got := errors.Is(err, ErrNoSpace) && errors.As(err, &se); got != tc.noSpace {
				t.Fatalf("Save = %v; ErrNoSpace %v, want %v", err, got, tc.noSpace)
			}
			if !errors.Is(err, tc.errno) || !strings.Contains(err.Error(), `save voice "a"`) {
				t.Errorf("error %q lacks the cause or the voice", err)
			}
			if tc.noSpace && se.Name != "a" {
				t.Errorf("SpaceError.Name = %q", se.Name)
			}
			if got, _ := s.Get("a"); got != first {
				t.Error("the failed save changed the loaded voice")
			}
			if got := openT(t, dir, Options{}).List(); len(got) != 1 || got[0].Key != first.Key {
				t.Errorf("the voice on disk changed: %v", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "voices", "a.voice")); err != nil {
				t.Error(err)
			}
		})
	}
}
