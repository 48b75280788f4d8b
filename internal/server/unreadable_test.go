//go:build unix

package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/voice"
)

// TestDeleteUnreadableVoice: a voice file that was corrupted, truncated,
// emptied, replaced by a FIFO or by a dangling symbolic link before the
// server started is deleted like any other voice (it used to be a 500 and
// a panic in handleVoiceDelete).
func TestDeleteUnreadableVoice(t *testing.T) {
	dir := t.TempDir()
	st, _, err := voice.Open(dir, voice.Options{Model: "moss_tts_nano/8codes"})
	if err != nil {
		t.Fatal(err)
	}
	vdir := filepath.Join(dir, "voices")
	damage := map[string]func(path string) error{
		"flipped": func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0x40
			return os.WriteFile(p, b, 0o644)
		},
		"truncated": func(p string) error { return os.Truncate(p, 20) },
		"empty":     func(p string) error { return os.Truncate(p, 0) },
		"fifo": func(p string) error {
			os.Remove(p)
			return syscall.Mkfifo(p, 0o644)
		},
		"dangling": func(p string) error {
			os.Remove(p)
			return os.Symlink(filepath.Join(dir, "nowhere.voice"), p)
		},
	}
	codes := make([][]int, 4)
	for i := range codes {
		codes[i] = make([]int, 8)
	}
	for name, f := range damage {
		if _, err := st.Add(voice.Voice{Name: name, Codes: codes, Duration: 0.32}, false); err != nil {
			t.Fatal(err)
		}
		if err := f(filepath.Join(vdir, name+".voice")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// The server starts on the damaged directory, as after a restart.
	ts := newTestServer(t, serverOpts{dataDir: dir})
	for name := range damage {
		done := make(chan struct{})
		go func() {
			defer close(done)
			r, b := ts.del(t, "/v1/audio/voices/"+name)
			var got struct {
				Object, Name string
				Deleted      bool
			}
			if r.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.Object != "voice.deleted" || got.Name != name || !got.Deleted {
				t.Errorf("DELETE %s: %d %s; want 200 voice.deleted", name, r.StatusCode, b)
			}
			if _, err := os.Lstat(filepath.Join(vdir, name+".voice")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("DELETE %s left the file: %v", name, err)
			}
			if r, b := ts.del(t, "/v1/audio/voices/"+name); r.StatusCode != 404 {
				t.Errorf("second DELETE %s: %d %s; want 404", name, r.StatusCode, b)
			}
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second): // a guard against a hang (FIFO), not a timing assertion
			t.Fatalf("DELETE %s hung", name)
		}
	}
}
