package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// Soak budgets. The TTFA budget is for the tiny model on 2 busy cores with
// the race detector; a regression in admission or streaming shows up as
// seconds, not tens of milliseconds.
const (
	soakTTFABudget = 3 * time.Second
	// soakRSSBound bounds the whole test process's peak RSS: the tiny
	// model, 4 slots, the request body budget and the Go runtime.
	soakRSSBound = 1 << 30
)

// TestSoak mixes for NANOVOX_SOAK (a duration, e.g. 20s; unset skips) every
// kind of traffic the server meets — streamed and buffered requests in
// every format, saves and deletes of voices, clients that hang up at a
// random point, slow readers, slow writers and oversized clips — over
// loopback, with a bounded number of workers. Afterwards: no 5xx, no
// request left active, goroutines back to their baseline, every listed
// voice readable, the process's peak RSS within soakRSSBound and the TTFA
// p95 of the ordinary streamed requests within soakTTFABudget.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("NANOVOX_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set NANOVOX_SOAK=20s (or longer) to run the soak test")
	}
	ts := newTestServer(t, serverOpts{ignoreEOS: true, engine: engine.Config{MaxStreams: 4, Queue: 8},
		cfg: Config{Limits: Limits{MaxNewFrames: 12, MaxBodyBytes: 2 << 20, MaxInputChars: 2000}, IdleWriteTimeout: 2 * time.Second}})
	// One request first, so that what starts once per process (the
	// kernels' thread pool) is in the baseline.
	ts.addVoice(t, "soak-base", refWAV, nil)
	readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": "soak-base"})))
	ts.Client().CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	baseline := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()

	var (
		mu       sync.Mutex
		ttfas    []time.Duration
		counts   = map[string]int{}
		failures []string
	)
	count := func(kind string) { mu.Lock(); counts[kind]++; mu.Unlock() }
	fail := func(format string, a ...any) {
		mu.Lock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, a...))
		}
		mu.Unlock()
	}
	formats := []string{"mp3", "opus", "aac", "flac", "wav", "pcm"}
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(ctx context.Context, body []byte) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/audio/speech", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return client.Do(req)
	}
	check5xx := func(kind string, r *http.Response) bool {
		if r.StatusCode >= 500 {
			b, _ := io.ReadAll(r.Body)
			fail("%s: %d %s", kind, r.StatusCode, b)
			return false
		}
		return true
	}
	workers := map[string]func(r *rand.Rand){
		"streamed": func(r *rand.Rand) {
			f := formats[r.IntN(len(formats))]
			start := time.Now()
			resp, err := post(ctx, body(map[string]any{"voice": "soak-base", "stream": true, "response_format": f, "seed": r.IntN(1000)}))
			if err != nil {
				return // the soak's deadline
			}
			defer resp.Body.Close()
			if !check5xx("streamed", resp) {
				return
			}
			br := bufio.NewReader(resp.Body)
			if _, err := br.Peek(1); err == nil {
				mu.Lock()
				ttfas = append(ttfas, time.Since(start))
				mu.Unlock()
			}
			io.Copy(io.Discard, br)
			count("streamed")
		},
		"buffered": func(r *rand.Rand) {
			f := formats[r.IntN(len(formats))]
			resp, err := post(ctx, body(map[string]any{"voice": map[string]any{"ref_audio": refB64}, "response_format": f, "speed": []float64{0.5, 1, 1.5}[r.IntN(3)]}))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if check5xx("buffered", resp) {
				io.Copy(io.Discard, resp.Body)
				count("buffered")
			}
		},
		"voices": func(r *rand.Rand) {
			name := "soak-" + strconv.Itoa(r.IntN(6))
			if r.IntN(2) == 0 {
				b, ct := multipartBody(map[string]string{"name": name, "replace": "true"}, map[string][]byte{"file": refWAV})
				req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/audio/voices", bytes.NewReader(b))
				req.Header.Set("Content-Type", ct)
				if resp, err := client.Do(req); err == nil {
					check5xx("save", resp)
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				count("save")
				return
			}
			req, _ := http.NewRequestWithContext(ctx, "DELETE", ts.URL+"/v1/audio/voices/"+name, nil)
			if resp, err := client.Do(req); err == nil {
				check5xx("delete", resp)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			count("delete")
		},
		"hang up": func(r *rand.Rand) {
			rctx, rcancel := context.WithCancel(ctx)
			defer rcancel()
			resp, err := post(rctx, body(map[string]any{"voice": "soak-base", "stream": true, "response_format": formats[r.IntN(len(formats))]}))
			if err != nil {
				return
			}
			io.CopyN(io.Discard, resp.Body, int64(r.IntN(20000)))
			rcancel()
			resp.Body.Close()
			count("hang up")
		},
		"slow reader": func(r *rand.Rand) {
			resp, err := post(ctx, body(map[string]any{"voice": "soak-base", "stream": true, "response_format": "pcm"}))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if !check5xx("slow reader", resp) {
				return
			}
			buf := make([]byte, 4096)
			for {
				if _, err := resp.Body.Read(buf); err != nil {
					break
				}
				time.Sleep(time.Duration(r.IntN(100)) * time.Millisecond)
			}
			count("slow reader")
		},
		"slow writer": func(r *rand.Rand) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				return
			}
			defer conn.Close()
			b := body(map[string]any{"voice": "soak-base", "response_format": "wav"})
			fmt.Fprintf(conn, "POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(b))
			for i := 0; i < len(b); i += 64 {
				if ctx.Err() != nil {
					return
				}
				conn.Write(b[i:min(i+64, len(b))])
				time.Sleep(10 * time.Millisecond)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err == nil {
				check5xx("slow writer", resp)
				io.Copy(io.Discard, resp.Body)
			}
			count("slow writer")
		},
		"oversized clip": func(r *rand.Rand) {
			resp, err := post(ctx, body(map[string]any{"voice": map[string]any{"ref_audio": strings.Repeat("A", 3<<20)}}))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				fail("oversized clip: status %d, want 413", resp.StatusCode)
			}
			count("oversized clip")
		},
	}
	var wg sync.WaitGroup
	var seed atomic.Uint64
	for _, work := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed.Add(1), 7))
			for ctx.Err() == nil {
				work(r)
			}
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	ts.Client().CloseIdleConnections()

	// Back to rest: no stream active, no goroutine left over.
	deadline := time.Now().Add(10 * time.Second)
	for {
		active, queued := ts.eng.Active()
		g := runtime.NumGoroutine()
		if active == 0 && queued == 0 && g <= baseline+2 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Errorf("after the soak: %d active, %d queued, %d goroutines (baseline %d):\n%s", active, queued, g, baseline, buf[:runtime.Stack(buf, true)])
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Every voice the store lists is readable.
	r, b := ts.get(t, "/v1/audio/voices")
	if r.StatusCode != 200 {
		t.Fatalf("list voices: %d %s", r.StatusCode, b)
	}
	for _, v := range ts.voices.List() {
		if r, b := ts.get(t, "/v1/audio/voices/"+v.Name); r.StatusCode != 200 {
			t.Errorf("voice %s listed but not readable: %d %s", v.Name, r.StatusCode, b)
		}
	}
	hwm := rss(t, "VmHWM")
	slices.Sort(ttfas)
	var p95 time.Duration
	if len(ttfas) > 0 {
		p95 = ttfas[min(len(ttfas)-1, len(ttfas)*95/100)]
	}
	t.Logf("soak %v: %v; streamed TTFA p95 %v over %d; peak RSS %d MiB", d, counts, p95, len(ttfas), hwm>>20)
	for _, f := range failures {
		t.Error(f)
	}
	if len(ttfas) == 0 || p95 > soakTTFABudget {
		t.Errorf("streamed TTFA p95 %v (%d requests), budget %v", p95, len(ttfas), soakTTFABudget)
	}
	if hwm > soakRSSBound {
		t.Errorf("peak RSS %d MiB, bound %d MiB", hwm>>20, soakRSSBound>>20)
	}
	for _, kind := range []string{"streamed", "buffered", "save", "hang up", "slow reader", "slow writer", "oversized clip"} {
		if counts[kind] == 0 {
			t.Errorf("no %s request completed", kind)
		}
	}
}
