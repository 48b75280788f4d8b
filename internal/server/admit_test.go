package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBudget: the budget grants in arrival order, clamps a request larger
// than itself, and a waiter whose context ends leaves the queue without
// keeping anything.
func TestBudget(t *testing.T) {
	b := newBudget(10, nil)
	ctx := context.Background()
	if n, err := b.acquire(ctx, 25); err != nil || n != 10 {
		t.Fatalf("oversized acquire: %d, %v; want the whole budget", n, err)
	}
	b.release(10)
	a, _ := b.acquire(ctx, 6)
	order := make(chan int, 2)
	var wg sync.WaitGroup
	for i, n := range []int64{8, 3} { // the 3 fits now but arrived second: it waits its turn
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := b.acquire(ctx, n)
			if err != nil {
				t.Error(err)
			}
			order <- i
			b.release(got)
		}()
		for waiting(b) < i+1 {
			runtime.Gosched()
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { _, err := b.acquire(cctx, 10); done <- err }()
	for waiting(b) < 3 {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled waiter got the budget")
	}
	b.release(a)
	wg.Wait()
	if first, second := <-order, <-order; first != 0 || second != 1 {
		t.Fatalf("granted in order %d, %d; want 0, 1", first, second)
	}
	if u := b.inUse(); u != 0 {
		t.Fatalf("%d still in use after every release", u)
	}
}

func waiting(b *budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len()
}

// TestDecodeBase64InPlace: decoding in place agrees with encoding/base64
// on every variant the API accepts, across block boundaries, and reports
// corrupt input at its offset.
func TestDecodeBase64InPlace(t *testing.T) {
	src := make([]byte, 10000)
	for i := range src {
		src[i] = byte(i * 7)
	}
	std := base64.StdEncoding.EncodeToString(src)
	wrapped := regroup(std, 76, "\r\n")
	for _, tc := range []struct {
		name, in string
		want     []byte
	}{
		{"std", std, src},
		{"raw", base64.RawStdEncoding.EncodeToString(src[:9999]), src[:9999]},
		{"url", base64.URLEncoding.EncodeToString(src), src},
		{"wrapped", wrapped, src},
		{"data uri", "data:audio/wav;base64," + std, src},
		{"short", "QUJD", []byte("ABC")},
		{"empty", "", []byte{}},
	} {
		got, err := decodeBase64InPlace([]byte(tc.in))
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", tc.name, len(got), err, len(tc.want))
		}
	}
	bad := []byte(std)
	bad[5000] = '*'
	_, err := decodeBase64InPlace(bad)
	if want := base64.CorruptInputError(5000); err != want {
		t.Errorf("corrupt input: %v, want %v", err, want)
	}
}

func regroup(s string, n int, sep string) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + sep)
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// metricValue scrapes one unlabelled sample from /metrics.
func metricValue(t *testing.T, ts *testServer, name string) float64 {
	t.Helper()
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// TestSlowBodyIsCut: a client that sends its declared body a byte at a
// time is answered 408 and disconnected once --body-timeout passes, the
// cut is counted, and the server keeps serving.
func TestSlowBodyIsCut(t *testing.T) {
	ts := newTestServer(t, serverOpts{cfg: Config{BodyTimeout: 300 * time.Millisecond}})
	conns := make([]net.Conn, 3)
	for i := range conns {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		conns[i] = c
	}
	for i, c := range conns {
		// Trickle: a byte every 100 ms until the server gives up.
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang fails, not a slow machine
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			close(stop)
			t.Fatalf("conn %d: no answer to a slow body: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("conn %d: status %d, want 408", i, resp.StatusCode)
		}
		// And the connection is closed.
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("conn %d: still open after the cut", i)
		}
		close(stop)
	}
	if n := metricValue(t, ts, "nanovox_request_bodies_cut_total"); n != 3 {
		t.Errorf("nanovox_request_bodies_cut_total = %v, want 3", n)
	}
	resp := ts.post(t, "/v1/audio/speech", body(map[string]any{"max_new_frames": 2}))
	if b := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("after the cuts: %d %s", resp.StatusCode, b)
	}
}

// TestConnectionCap: beyond --max-connections a connection is answered
// 503 and closed, the ones open keep being served, and a freed place is
// taken again.
func TestConnectionCap(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	srv := ts.srv
	// The same server behind a capped listener of its own.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(LimitListener(ln, 2, srv.metrics))
	defer hs.Close()
	addr := ln.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		return c
	}
	get := func(c net.Conn) int {
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	a, b := dial(), dial()
	defer a.Close()
	if s := get(a); s != 200 {
		t.Fatalf("first connection: %d", s)
	}
	if s := get(b); s != 200 {
		t.Fatalf("second connection: %d", s)
	}
	c := dial()
	if s := get(c); s != 503 {
		t.Fatalf("third connection over a cap of 2: %d, want 503", s)
	}
	c.Close()
	if s := get(a); s != 200 { // the open ones keep being served
		t.Fatalf("first connection after a refusal: %d", s)
	}
	if n := metricValue(t, ts, "nanovox_connections_refused_total"); n != 1 {
		t.Errorf("nanovox_connections_refused_total = %v, want 1", n)
	}
	b.Close()
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(t, ts, "nanovox_connections_open") > 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	d := dial()
	defer d.Close()
	if s := get(d); s != 200 {
		t.Fatalf("a connection after one closed: %d, want 200", s)
	}
}

// rss reads a field of /proc/self/status in bytes.
func rss(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Skipf("%s not in /proc/self/status", field)
	return 0
}

// decodedClipBytes is what a decoded reference clip of secs seconds at
// 192 kHz stereo holds at most: the source as float32, its 48 kHz stereo
// resampling and that interleaved for the engine (about 66 MiB for 30 s).
func decodedClipBytes(secs float64) int64 {
	return int64(4 * secs * (192000*2 + 2*48000*2))
}

// TestAdmissionMemoryStorm sends a storm of large inline clips at once and
// checks that the peak RSS stays within the documented bound
// (docs/configuration.md#sizing): model + streams + body budget + clip
// decodes × decoded clip, plus slack for the collector (run at GOGC=10 as
// the server does) and the test's own client. The normal run sends 24
// clips of 3 s; NANOVOX_LONG_TESTS=1 sends the full storm, 20 clips of
// 30 s at 192 kHz stereo (30.7 MB of JSON each).
func TestAdmissionMemoryStorm(t *testing.T) {
	n, secs := 24, 3.0
	long := os.Getenv("NANOVOX_LONG_TESTS") != ""
	if long {
		n, secs = 20, 30.0
	}
	if raceEnabled && !long {
		n, secs = 4, 1.0 // the race detector's shadow memory would blur the bound
	}
	clip := wavB64(192000, 2, secs)
	req, _ := json.Marshal(map[string]any{"input": "Memory storm.", "voice": map[string]any{"ref_audio": clip}, "seed": 1, "max_new_frames": 2, "response_format": "wav"})
	clip = ""
	bodyMem := 2 * int64(len(req)) // two bodies read at once
	ts := newTestServer(t, serverOpts{cfg: Config{BodyMemoryBytes: bodyMem, ClipDecodes: 2, Limits: Limits{MaxBodyBytes: 64 << 20}}})
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	// Warm up: the model's buffers and one stream are part of the baseline.
	resp := ts.post(t, "/v1/audio/speech", body(map[string]any{"max_new_frames": 2}))
	readAll(t, resp)
	runtime.GC()
	debug.FreeOSMemory()
	base := rss(t, "VmRSS")
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := http.Post(ts.URL+"/v1/audio/speech", "application/json", bytes.NewReader(req))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			codes[i] = r.StatusCode
		}()
	}
	wg.Wait()
	peak := rss(t, "VmHWM")
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d: status %d", i, c)
		}
	}
	// The documented bound above the idle server: the body budget and the
	// clip decodes. The slack covers the tiny model's clip encoder (held
	// with a decode), the collector's lag at GOGC=10 and the client.
	bound := bodyMem + 2*decodedClipBytes(secs)
	slack := bound + 64<<20
	t.Logf("%d requests of %.1f MB: RSS %.0f MiB before, peak %.0f MiB (+%.0f MiB); bound +%.0f MiB, with slack +%.0f MiB",
		n, float64(len(req))/1e6, mib(base), mib(peak), mib(peak-base), mib(bound), mib(bound+slack))
	if peak-base > bound+slack {
		t.Errorf("peak RSS grew by %.0f MiB; the documented bound is %.0f MiB (+%.0f MiB slack)", mib(peak-base), mib(bound), mib(slack))
	}
	if u := ts.srv.bodies.inUse() + ts.srv.clips.inUse(); u != 0 {
		t.Errorf("budgets still hold %d after the storm", u)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestVoiceUploadTakesTheGates: a voice upload waits for a clip decode like
// a speech request's inline clip, and reserves its body's memory while it
// runs.
func TestVoiceUploadTakesTheGates(t *testing.T) {
	ts := newTestServer(t, serverOpts{cfg: Config{ClipDecodes: 1}})
	srv := ts.srv
	taken, err := srv.clips.acquire(context.Background(), 1) // the only decode
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		b, ct := multipartBody(map[string]string{"name": "gated"}, map[string][]byte{"file": refWAV})
		req, _ := http.NewRequest("POST", ts.URL+"/v1/audio/voices", bytes.NewReader(b))
		req.Header.Set("Content-Type", ct)
		r, err := ts.Client().Do(req)
		if err != nil {
			done <- 0
			return
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		done <- r.StatusCode
	}()
	// The upload reserves its body and then waits for the decode.
	deadline := time.Now().Add(10 * time.Second)
	for srv.bodies.inUse() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upload never reserved its body's memory")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case code := <-done:
		t.Fatalf("the upload finished (%d) while the only clip decode was taken", code)
	case <-time.After(200 * time.Millisecond):
	}
	srv.clips.release(taken)
	if code := <-done; code != http.StatusCreated {
		t.Fatalf("upload: %d, want 201", code)
	}
	if n := srv.bodies.inUse(); n != 0 {
		t.Fatalf("%d body bytes still reserved after the upload", n)
	}
}
