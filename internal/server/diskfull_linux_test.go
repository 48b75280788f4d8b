package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips the
// test where that is not allowed (not root, no mount namespace rights).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the filesystem is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// Smaller writes fill the last partial block.
	for _, err := f.Write(chunk[:1]); err == nil; _, err = f.Write(chunk[:1]) {
	}
}

// TestVoiceSaveDiskFull: replacing a voice on a full disk answers 507
// insufficient_storage with a message, logs the cause, and keeps the old
// voice, in memory and on disk. Uses a real full filesystem (a 256 KiB
// tmpfs), so it runs as root on Linux only.
func TestVoiceSaveDiskFull(t *testing.T) {
	dir := mountTmpfs(t, "256k")
	var logs logBuffer
	ts := newTestServer(t, serverOpts{dataDir: dir, cfg: Config{Logger: logs.logger()}})
	r := ts.addVoice(t, "keep", refWAV, map[string]string{"ref_text": "first"})
	if r.StatusCode != 201 {
		t.Fatalf("first save: %d %s", r.StatusCode, readAll(t, r))
	}
	before, err := os.ReadFile(filepath.Join(dir, "voices", "keep.voice"))
	if err != nil {
		t.Fatal(err)
	}
	fill(t, dir)
	for _, replace := range []string{"true", "false"} {
		name := map[string]string{"true": "keep", "false": "new"}[replace]
		r = ts.addVoice(t, name, refWAV, map[string]string{"ref_text": "second", "replace": replace})
		b := readAll(t, r)
		e := decodeErr(t, b)
		if r.StatusCode != 507 || e.Error.Code == nil || *e.Error.Code != "insufficient_storage" || !strings.Contains(e.Error.Message, "full") {
			t.Errorf("save %q on a full disk: %d %s; want 507 insufficient_storage", name, r.StatusCode, b)
		}
		if strings.Contains(e.Error.Message, dir) {
			t.Errorf("the answer shows the server's path: %s", b)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "no space left on device") || !strings.Contains(out, "status=507") {
		t.Errorf("the 507 was not logged with its cause; log:\n%s", out)
	}
	_, b := ts.get(t, "/v1/audio/voices/keep")
	var got voiceJSON
	if json.Unmarshal(b, &got) != nil || got.RefText != "first" {
		t.Errorf("the old voice is not served: %s", b)
	}
	after, err := os.ReadFile(filepath.Join(dir, "voices", "keep.voice"))
	if err != nil || string(after) != string(before) {
		t.Errorf("the old voice file changed (%v)", err)
	}
	if r, _ := ts.get(t, "/v1/audio/voices/new"); r.StatusCode != 404 {
		t.Errorf("GET new after a failed save: %d", r.StatusCode)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "voices"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
