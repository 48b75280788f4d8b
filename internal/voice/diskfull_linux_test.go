package voice

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSaveDiskFull saves on a really full file system: a 64 KiB tmpfs
// filled to the last byte. It needs root (mount) and skips otherwise.
func TestSaveDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	s := openT(t, dir, Options{})
	addT(t, s, testVoice("a", 2, 16, 1), false)
	first, _ := s.Get("a")
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 4096; n > 0; {
		if _, err := f.Write(make([]byte, n)); err != nil {
			n /= 2
		}
	}
	f.Close()
	for _, v := range []Voice{testVoice("a", 3, 16, 2), testVoice("b", 3, 16, 3)} {
		_, _, err := s.Save(v, true)
		if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Save(%s) on a full disk = %v, want ErrNoSpace", v.Name, err)
		}
	}
	if got, _ := s.Get("a"); got != first {
		t.Error("the failed save changed the loaded voice")
	}
	if got := openT(t, dir, Options{}).List(); len(got) != 1 || got[0].Key != first.Key {
		t.Errorf("the store on disk changed: %v", got)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "voices"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
