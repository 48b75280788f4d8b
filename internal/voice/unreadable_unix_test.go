//go:build unix

package voice

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSymlinksNotFollowed: a voice file that is a symbolic link, to a valid
// voice file outside the data directory or inside it, is skipped, and
// deleting it removes the link, not its target.
func TestSymlinksNotFollowed(t *testing.T) {
	outside := t.TempDir()
	so := openT(t, outside, Options{})
	addT(t, so, testVoice("x", 3, 16, 1), false)
	addT(t, so, testVoice("y", 3, 16, 2), false)
	target := filepath.Join(outside, "voices", "x.voice")

	dir := t.TempDir()
	s := openT(t, dir, Options{})
	addT(t, s, testVoice("y", 3, 16, 2), false)
	vdir := filepath.Join(dir, "voices")
	if err := os.Symlink(target, filepath.Join(vdir, "x.voice")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("y.voice", filepath.Join(vdir, "z.voice")); err != nil {
		t.Fatal(err)
	}
	s2, w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.List(); len(got) != 1 || got[0].Name != "y" {
		t.Errorf("loaded %v, want only y (links are not followed)", names(got))
	}
	if len(w) != 2 {
		t.Fatalf("warnings %v, want two (x.voice, z.voice)", w)
	}
	for _, x := range w {
		if !strings.Contains(x.Err.Error(), "symbolic link") {
			t.Errorf("warning %q does not say it is a symbolic link", x)
		}
	}
	if _, err := s2.Get("x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(x) through a link = %v, want ErrNotFound", err)
	}
	if old, err := s2.Delete("x"); err != nil || old != nil {
		t.Errorf("Delete(link) = %v, %v; want nil, nil", old, err)
	}
	if _, err := os.Lstat(filepath.Join(vdir, "x.voice")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("link not removed: %v", err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("Delete removed the link's target: %v", err)
	}
}

// TestFIFONeverBlocks: a FIFO named like a voice file is skipped at Open,
// and Delete removes it, without waiting for a writer.
func TestFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	vdir := filepath.Join(dir, "voices")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(vdir, "f.voice")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, w, err := Open(dir, Options{})
		if err != nil || len(w) != 1 || !strings.Contains(w[0].Err.Error(), "not a regular file") {
			t.Errorf("Open with a FIFO = %v, %v; want one not-a-regular-file warning", w, err)
			return
		}
		// readFile itself must not block either, whatever stat said before.
		if _, err := s.readFile(fifo, "f"); err == nil {
			t.Error("readFile(FIFO) succeeded")
		}
		if old, err := s.Delete("f"); err != nil || old != nil {
			t.Errorf("Delete(FIFO) = %v, %v", old, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a guard against a hang, not a timing assertion
		t.Fatal("reading a FIFO blocked")
	}
	if _, err := os.Lstat(fifo); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("FIFO not removed: %v", err)
	}
}

func names(vs []*Voice) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}
