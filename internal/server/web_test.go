package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// webTestDir holds the Node driver of the web page test.
const webTestDir = "../../scripts/web-test"

// need finds an external program the browser test runs; without it the
// test skips, except in CI, which installs them all.
func need(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found; CI must install it", names[0])
	}
	t.Skipf("%s not found", names[0])
	return ""
}

// TestWebPage drives the page at / in headless Chromium (through the Node
// driver scripts/web-test/test.mjs): voice list and API key errors, buffered
// mp3, wav, flac and opus decoded by the browser, streamed pcm scheduled
// chunk by chunk, speed and sample rate, Stop, and error messages.
func TestWebPage(t *testing.T) {
	chromium := need(t, "/usr/bin/chromium", "chromium", "chromium-browser")
	node := need(t, "node")
	if _, err := os.Stat(filepath.Join(webTestDir, "node_modules", "playwright-core")); err != nil {
		// The only download of the test: playwright-core from the npm
		// registry, pinned by the lockfile. It drives the system browser
		// and never fetches one of its own.
		npm := need(t, "npm")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = webTestDir
		cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("npm ci in %s: %v\n%s", webTestDir, err, out)
			}
			t.Skipf("npm ci in %s failed (offline?): %v\n%s", webTestDir, err, out)
		}
	}

	const key = "web-test-key"
	// Every request yields exactly frames codec frames (the model's stop is
	// ignored, the text is one chunk), so the driver knows the duration the
	// browser must decode.
	const frames = 25
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ts := newTestServer(t, serverOpts{ignoreEOS: true, cfg: Config{APIKey: key, Limits: Limits{MaxNewFrames: frames}, Logger: log},
		listener: func(l net.Listener) net.Listener { return slowListener{l} }})
	b, ct := multipartBody(map[string]string{"name": "webvoice"}, map[string][]byte{"file": refWAV})
	if r := ts.post(t, "/v1/audio/voices", b, "Content-Type", ct, "Authorization", "Bearer "+key); r.StatusCode != 201 {
		t.Fatalf("save voice: %d %s", r.StatusCode, readAll(t, r))
	} else {
		r.Body.Close()
	}

	out := os.Getenv("NANOVOX_WEB_OUT") // keeps the screenshot
	if out == "" {
		out = t.TempDir()
	}
	clip, err := filepath.Abs("../../testdata/tiny-a/ref.wav")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "test.mjs", ts.URL+"/")
	cmd.Dir = webTestDir
	cmd.Env = append(os.Environ(),
		"CHROMIUM="+chromium,
		"NANOVOX_KEY="+key,
		"NANOVOX_VOICE=webvoice",
		"NANOVOX_SECONDS="+strconv.FormatFloat(frames*frameSeconds, 'f', -1, 64),
		"NANOVOX_CLIP="+clip,
		"NANOVOX_OUT="+out,
	)
	res, err := cmd.CombinedOutput()
	t.Logf("browser driver output:\n%s", res)
	if err != nil {
		t.Fatalf("browser test: %v", err)
	}
	// Stop pressed while the request was generating must reach the
	// server as a cancelled request, not only silence the page. The
	// handler logs after the client has gone, so wait for it.
	if bytes.Contains(res, []byte("STOPPED_IN_FLIGHT")) {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), "speech cancelled") {
			if time.Now().After(deadline) {
				t.Fatalf("the page aborted a request but the server did not log it cancelled:\n%s", logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	} else {
		t.Log("the long request had finished before Stop; the abort was not exercised")
	}
}

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// slowListener sends at about 2 MB/s, so a long stream is still arriving
// when the page's Stop is pressed (the tiny model generates far faster than
// real time, and the server sends as fast as it generates).
type slowListener struct{ net.Listener }

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return slowConn{c}, nil
}

type slowConn struct{ net.Conn }

func (c slowConn) Write(p []byte) (int, error) {
	time.Sleep(time.Duration(len(p)/2) * time.Microsecond)
	return c.Conn.Write(p)
}
