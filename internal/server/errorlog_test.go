package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nanovox/nanovox/internal/engine"
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

// prepareFails makes every request fail while it is being prepared, with
// an error that is not the client's: Submit itself returns the fault.
type prepareFails struct{ engine.Family }

func (prepareFails) Prepare(context.Context, *engine.Voice, engine.Prefix, string, engine.Params) (engine.Job, error) {
	return nil, errors.New("injected prepare fault")
}

// TestSpeechFaultLoggedOnce: a speech request answered with a 5xx leaves
// exactly one warning-or-error log line, and that line names the cause
// (the handler and the request log used to both log it).
func TestSpeechFaultLoggedOnce(t *testing.T) {
	f := loadFamily(t)
	for _, tc := range []struct {
		name   string
		fam    engine.Family
		fields map[string]any
		cause  string
	}{
		{"submit", prepareFails{f}, map[string]any{}, "injected prepare fault"},
		{"buffered", failing{endless{f}, 0}, map[string]any{"max_new_frames": 50}, "injected fault"},
		{"stream before audio", failing{endless{f}, 0}, map[string]any{"stream": true, "max_new_frames": 50}, "injected fault"},
		{"sse before audio", failing{endless{f}, 0}, map[string]any{"stream_format": "sse", "max_new_frames": 50}, "injected fault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			eng := engine.New(tc.fam, engine.Config{MaxStreams: 2})
			hs := httptest.NewServer(New(eng, Config{ModelID: "x", Logger: logs.logger()}, nil).Handler())
			defer func() { hs.Close(); eng.Close(context.Background()) }()
			r, err := hs.Client().Post(hs.URL+"/v1/audio/speech", "application/json", bytes.NewReader(body(tc.fields)))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != 500 {
				t.Fatalf("status %d %s; want 500", r.StatusCode, b)
			}
			if strings.Contains(string(b), tc.cause) {
				t.Errorf("the answer shows the internal cause: %s", b)
			}
			hs.Close() // the handler has returned: its log lines are written
			var lines []string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], tc.cause) || !strings.Contains(lines[0], "status=500") {
				t.Errorf("want one log line with status=500 and %q; got %d:\n%s", tc.cause, len(lines), strings.Join(lines, "\n"))
			}
		})
	}
}
