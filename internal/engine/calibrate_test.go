package engine_test

import (
	"context"
	"testing"

	"github.com/nanovox/nanovox/internal/engine"
)

// TestCalibrate: with the real-time limit on, Calibrate runs batches of 1,
// MaxStreams/2 and MaxStreams requests of ten frames each, sets the limit
// it reports (within the slots) and leaves the slots free; without the
// limit it runs nothing.
func TestCalibrate(t *testing.T) {
	ref := make([]float32, 10)
	for _, rt := range []bool{true, false} {
		f := &fakeFamily{}
		e := engine.New(f, engine.Config{MaxStreams: 6, Queue: 6, RealTime: rt})
		c, err := e.Calibrate(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		if c.Limit < 1 || c.Limit > 6 || e.StreamLimit() != c.Limit {
			t.Errorf("realtime %v: calibrated limit %d, engine's %d", rt, c.Limit, e.StreamLimit())
		}
		if a, q := e.Active(); a != 0 || q != 0 {
			t.Errorf("realtime %v: after Calibrate %d active, %d queued", rt, a, q)
		}
		e.Close(context.Background())
		f.mu.Lock()
		stepped := 0
		for _, b := range f.batches {
			stepped += len(b)
		}
		f.mu.Unlock()
		want := 0
		if rt {
			want = 10 * (1 + 3 + 6)
		} else if c.Limit != 6 {
			t.Errorf("without the real-time limit Calibrate reports %d, want every slot", c.Limit)
		}
		if stepped != want {
			t.Errorf("realtime %v: %d stream steps, want %d", rt, stepped, want)
		}
	}
}

// TestCalibrateLeavesNoPrefix: on the real family the calibration voice's
// prompt prefix is computed once and dropped afterwards.
func TestCalibrateLeavesNoPrefix(t *testing.T) {
	f := family(t)
	e := engine.New(f, engine.Config{MaxStreams: 2, RealTime: true, PrefixCacheBytes: 64 << 20})
	defer e.Close(context.Background())
	c, err := e.Calibrate(context.Background(), refPCM)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) == 0 {
		t.Errorf("no step time measured: %+v", c)
	}
	if entries, _, _, misses := e.PrefixCacheStats(); entries != 0 || misses != 1 {
		t.Errorf("after Calibrate: %d prefix entries (want 0), %d computed (want 1)", entries, misses)
	}
}
