package server

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// TestLoad sends 200 streamed requests, 8 at a time, over loopback; a third
// of the clients hang up at a random point. Every request must either
// complete with all its audio or be cancelled by its own client: none may
// fail, and no goroutine may be left behind.
func TestLoad(t *testing.T) {
	const total, concurrency = 200, 8
	frames := 12
	if raceEnabled {
		frames = 3
	}
	ts := newTestServer(t, serverOpts{ignoreEOS: true, engine: engine.Config{MaxStreams: 8, Queue: 8}})
	before := runtime.NumGoroutine()
	var completed, cancelled, failed atomic.Int64
	var firstErr atomic.Value
	fail := func(msg string) {
		failed.Add(1)
		firstErr.CompareAndSwap(nil, msg)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			for i := range jobs {
				hangUp := i%3 == 0
				b := body(map[string]any{"stream": true, "max_new_frames": frames, "seed": i, "streaming_interval": 0.08,
					"input": "Load test request number " + strings.Repeat("x", i%7) + "."})
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/audio/speech", strings.NewReader(string(b)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					cancel()
					fail("request: " + err.Error())
					continue
				}
				if resp.StatusCode != 200 {
					msg, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					cancel()
					fail(resp.Status + " " + string(msg))
					continue
				}
				want := frames * 3840 * 2
				if hangUp {
					stop := rng.IntN(want)
					n, _ := io.CopyN(io.Discard, resp.Body, int64(stop))
					cancel() // the client goes away mid-stream
					resp.Body.Close()
					if int(n) != stop {
						fail("short read before hang-up")
						continue
					}
					cancelled.Add(1)
					continue
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				cancel()
				if err != nil || int(n) != want {
					fail("incomplete stream")
					continue
				}
				completed.Add(1)
			}
		}()
	}
	for i := range total {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	waitIdle(t, ts.eng, 5*time.Second)
	// Goroutines return to the baseline (the HTTP server's idle conns close).
	ts.CloseClientConnections()
	deadline := time.Now().Add(5 * time.Second)
	after := runtime.NumGoroutine()
	for after > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	leaked := max(0, after-before)
	t.Logf("load: %d requests, %d concurrent, in %.2fs: %d completed, %d cancelled by their client, %d failed; goroutines %d before, %d after (%d leaked)",
		total, concurrency, elapsed.Seconds(), completed.Load(), cancelled.Load(), failed.Load(), before, after, leaked)
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed; first: %v", failed.Load(), firstErr.Load())
	}
	if completed.Load()+cancelled.Load() != total || leaked != 0 {
		t.Fatalf("completed %d + cancelled %d != %d, or %d goroutines leaked", completed.Load(), cancelled.Load(), total, leaked)
	}
}
