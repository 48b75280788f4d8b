package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// waitIdle waits until no stream holds a slot.
func waitIdle(t *testing.T, e *engine.Engine, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if a, q := e.Active(); a == 0 && q == 0 {
			return
		}
		if time.Now().After(deadline) {
			a, q := e.Active()
			t.Fatalf("still %d active, %d queued after %v", a, q, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDisconnectFreesSlot(t *testing.T) {
	ts := newTestServer(t, serverOpts{ignoreEOS: true, engine: engine.Config{MaxStreams: 1, Queue: 0}})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", ts.URL+"/v1/audio/speech", strings.NewReader(string(body(map[string]any{"stream": true, "max_new_frames": 100}))))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	before := ts.steps.count()
	resp.Body.Close() // disconnect mid-stream
	waitIdle(t, ts.eng, 2*time.Second)
	if n := ts.steps.count() - before; n >= 100 {
		t.Fatalf("generation ran %d more steps after the disconnect", n)
	}
	// The slot is free: with no queue a new request is served at once.
	r2 := ts.post(t, "/v1/audio/speech", body(map[string]any{"max_new_frames": 3, "response_format": "pcm"}))
	if b := readAll(t, r2); r2.StatusCode != 200 || len(b) != 3*3840*2 {
		t.Fatalf("request after disconnect: %d, %d bytes", r2.StatusCode, len(b))
	}
}

func TestQueueFull503(t *testing.T) {
	ts := newTestServer(t, serverOpts{ignoreEOS: true, engine: engine.Config{MaxStreams: 1, Queue: 0}})
	resp := ts.post(t, "/v1/audio/speech", body(map[string]any{"stream": true, "max_new_frames": 200}))
	defer resp.Body.Close()
	io.ReadFull(resp.Body, make([]byte, 100)) // it holds the only slot now
	r2 := ts.post(t, "/v1/audio/speech", body(nil))
	b := readAll(t, r2)
	if r2.StatusCode != 503 || r2.Header.Get("Retry-After") == "" {
		t.Fatalf("busy server: %d (Retry-After %q) %s", r2.StatusCode, r2.Header.Get("Retry-After"), b)
	}
	if e := decodeErr(t, b); *e.Error.Code != "server_busy" {
		t.Fatalf("code %v", *e.Error.Code)
	}
}

// smallBuffers shrinks the server side's socket send buffer so a client
// that stops reading blocks the writer quickly.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestStalledReaderIsCut: a client that stops reading without disconnecting
// is cut off after the idle-write timeout, while two other streams complete.
func TestStalledReaderIsCut(t *testing.T) {
	ts := newTestServer(t, serverOpts{
		ignoreEOS: true,
		engine:    engine.Config{MaxStreams: 3},
		cfg:       Config{IdleWriteTimeout: 300 * time.Millisecond},
		listener:  func(l net.Listener) net.Listener { return smallBuffers{l} },
	})
	addr := strings.TrimPrefix(ts.URL, "http://")
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return nil
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b := body(map[string]any{"stream": true, "max_new_frames": 300})
	fmt.Fprintf(conn, "POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	br := bufio.NewReaderSize(conn, 512)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		t.Fatalf("stalled client status %q %v", status, err)
	}
	// Now stop reading. Two other clients stream to completion meanwhile.
	var wg sync.WaitGroup
	got := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ts.post(t, "/v1/audio/speech", body(map[string]any{"stream": true, "max_new_frames": 40, "seed": i}))
			got[i] = len(readAll(t, r))
		}()
	}
	wg.Wait()
	for i, n := range got {
		if n != 40*3840*2 {
			t.Fatalf("stream %d got %d bytes while another client stalled, want %d", i, n, 40*3840*2)
		}
	}
	// The stalled stream is cut off after the idle timeout, long before its
	// 300 frames.
	waitIdle(t, ts.eng, 5*time.Second)
	if n := ts.steps.count(); n > 300 {
		t.Fatalf("%d steps ran: the stalled stream was not cut off", n)
	}
}

func TestShutdownDrains(t *testing.T) {
	ts := newTestServer(t, serverOpts{ignoreEOS: true})
	resp := ts.post(t, "/v1/audio/speech", body(map[string]any{"stream": true, "max_new_frames": 60, "streaming_interval": 0.08}))
	first := make([]byte, 1000)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	ts.srv.SetDraining()
	r := ts.post(t, "/v1/audio/speech", body(nil))
	if b := readAll(t, r); r.StatusCode != 503 {
		t.Fatalf("new request while draining: %d %s", r.StatusCode, b)
	}
	rr, err := ts.Client().Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, rr); rr.StatusCode != 503 {
		t.Fatalf("readyz while draining: %d", rr.StatusCode)
	}
	done := make(chan error)
	go func() { done <- ts.Config.Shutdown(context.Background()) }()
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(first)+len(rest) != 60*3840*2 {
		t.Fatalf("in-flight stream during shutdown: %d bytes, %v; want all %d", len(first)+len(rest), err, 60*3840*2)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := ts.eng.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// failing makes every stepper fail after n steps: a fault in the middle of
// generation.
type failing struct {
	engine.Family
	n int
}

func (f failing) NewStepper() engine.Stepper {
	return &failStepper{Stepper: f.Family.NewStepper(), left: f.n}
}

type failStepper struct {
	engine.Stepper
	left int
}

func (s *failStepper) Step(jobs []engine.Job) ([]engine.Output, error) {
	if s.left <= 0 {
		return nil, fmt.Errorf("injected fault")
	}
	s.left--
	return s.Stepper.Step(jobs)
}

// TestMidStreamFault: a failure after audio was sent aborts a raw stream
// (the client sees an incomplete transfer, not a clean end), sends an error
// event on SSE, and the server keeps serving.
func TestMidStreamFault(t *testing.T) {
	f := loadFamily(t)
	// post sends one request to a fresh server whose model fails after n steps.
	post := func(n int, b []byte) *http.Response {
		eng := engine.New(failing{endless{f}, n}, engine.Config{MaxStreams: 2})
		hs := httptest.NewServer(New(eng, Config{ModelID: "x"}, nil).Handler())
		t.Cleanup(func() { hs.Close(); eng.Close(context.Background()) })
		r, err := hs.Client().Post(hs.URL+"/v1/audio/speech", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := post(5, body(map[string]any{"stream": true, "max_new_frames": 50}))
	n, err := io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || err == nil || n == 0 {
		t.Fatalf("raw stream with a fault: status %d, %d bytes, read error %v; want audio then an aborted transfer", r.StatusCode, n, err)
	}
	r = post(5, body(map[string]any{"stream_format": "sse", "max_new_frames": 50}))
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Contains(b, []byte(`"type":"speech.audio.delta"`)) || !bytes.Contains(b, []byte(`"type":"error"`)) || bytes.Contains(b, []byte("speech.audio.done")) {
		t.Fatalf("sse with a fault: %s", b)
	}
	// A fault before any audio is an error status, for streams too.
	for _, fields := range []map[string]any{{"max_new_frames": 50}, {"stream": true}} {
		r = post(0, body(fields))
		b, _ = io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 500 || decodeErr(t, b).Error.Type != "server_error" {
			t.Fatalf("%v with a fault at once: %d %s", fields, r.StatusCode, b)
		}
	}
}
