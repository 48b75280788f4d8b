package server

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nanovox/nanovox/internal/voice"
)

// logBuffer is a log sink safe for the server's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// faultyVoices is a store whose writes fail with the given errors.
type faultyVoices struct {
	*voice.Store
	deleteErr error
}

func (f faultyVoices) Delete(name string) (*voice.Voice, error) {
	if f.deleteErr != nil {
		return nil, f.deleteErr
	}
	return f.Store.Delete(name)
}

// TestInternalErrorsAreLogged: a 5xx that comes from an error the server
// did not foresee is logged with that error (it used to be answered
// internal_error with no log line at all).
func TestInternalErrorsAreLogged(t *testing.T) {
	var logs logBuffer
	ts := newTestServer(t, serverOpts{cfg: Config{Logger: logs.logger()}})
	cause := fmt.Errorf("delete voice %q: %w", "bob", &fs.PathError{Op: "remove", Path: "/data/voices/bob.voice", Err: syscall.EIO})
	ts.srv.cfg.Voices = faultyVoices{Store: ts.voices, deleteErr: cause}
	r, b := ts.del(t, "/v1/audio/voices/bob")
	if r.StatusCode != 500 || decodeErr(t, b).Error.Code == nil || *decodeErr(t, b).Error.Code != "internal_error" {
		t.Fatalf("DELETE with an I/O fault: %d %s; want 500 internal_error", r.StatusCode, b)
	}
	if strings.Contains(string(b), "/data/voices") {
		t.Errorf("the answer shows a server path: %s", b)
	}
	out := logs.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "input/output error") || !strings.Contains(out, "/v1/audio/voices/bob") || !strings.Contains(out, "status=500") {
		t.Errorf("the 500 was not logged with its cause; log:\n%s", out)
	}
}
