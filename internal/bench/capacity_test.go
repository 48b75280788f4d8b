package bench

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestSearchCapacity runs the search against synthetic machines: rtf(n) is
// the RTF p95 a count of n streams would measure, and a count passes when
// it is below MaxRealTimeRTF.
func TestSearchCapacity(t *testing.T) {
	linear := func(per float64) func(int) float64 { return func(n int) float64 { return per * float64(n) } }
	tests := []struct {
		name     string
		max      int
		rtf      func(n int) float64
		want     int
		probes   []int
		complete bool
	}{
		{"monotone", 64, linear(0.04), 22, []int{1, 2, 4, 8, 16, 32, 24, 20, 22, 23}, true},
		{"one stream is not real time", 64, linear(0.95), 0, []int{1}, true},
		{"capacity at the bound", 16, linear(0.01), 16, []int{1, 2, 4, 8, 16}, true},
		{"bound not a power of two", 12, linear(0.01), 12, []int{1, 2, 4, 8, 12}, true},
		{"fails just above the bound's half", 12, linear(0.1), 8, []int{1, 2, 4, 8, 12, 10, 9}, true},
		{"bound 1", 1, linear(0.5), 1, []int{1}, true},
		{
			// A noisy machine where 5 streams happened to fail: the
			// search never probes 5, and 8 passed.
			"noisy, not monotone", 64,
			func(n int) float64 {
				if n == 5 {
					return 0.95
				}
				return 0.1 * float64(n)
			},
			8, []int{1, 2, 4, 8, 16, 12, 10, 9}, true,
		},
		{
			// 10 streams happened to fail where 11 would pass: the
			// bisection takes 10 as the first failure.
			"noisy dip inside the bisection", 64,
			func(n int) float64 {
				if n == 10 {
					return 1.2
				}
				return 0.08 * float64(n)
			},
			9, []int{1, 2, 4, 8, 16, 12, 10, 9}, true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var probes []int
			got, complete, err := searchCapacity(tc.max, func(n int) (bool, error) {
				probes = append(probes, n)
				return tc.rtf(n) < MaxRealTimeRTF, nil
			}, func() bool { return false })
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || !slices.Equal(probes, tc.probes) || !complete {
				t.Errorf("capacity %d, complete %v, probes %v; want %d, probes %v", got, complete, probes, tc.want, tc.probes)
			}
			// Whatever the noise: every probe at or below the answer
			// passed, every one above failed.
			for _, n := range probes {
				if pass := tc.rtf(n) < MaxRealTimeRTF; pass != (n <= got) {
					t.Errorf("probe %d passed=%v against capacity %d", n, pass, got)
				}
			}
		})
	}
}

// TestSearchCapacityStops: a spent budget ends the search with the best
// count so far, marked incomplete; a probe's error ends it too.
func TestSearchCapacityStops(t *testing.T) {
	probes := 0
	got, complete, err := searchCapacity(64, func(n int) (bool, error) { probes++; return n < 20, nil }, func() bool { return probes == 3 })
	if err != nil || got != 4 || complete {
		t.Fatalf("budget after 3 probes: capacity %d, complete %v, err %v; want 4, false", got, complete, err)
	}
	boom := errors.New("boom")
	got, complete, err = searchCapacity(64, func(n int) (bool, error) {
		if n == 8 {
			return false, boom
		}
		return true, nil
	}, func() bool { return false })
	if !errors.Is(err, boom) || got != 4 || complete {
		t.Fatalf("error at 8: capacity %d, complete %v, err %v", got, complete, err)
	}
}

func TestRealTime(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want bool
	}{
		{Result{RTF: Percentiles{P95: 0.5}}, true},
		{Result{RTF: Percentiles{P95: 0.9}}, false},
		{Result{RTF: Percentiles{P95: 0.5}, Underruns: 1}, false},
	} {
		if got := RealTime(tc.r); got != tc.want {
			t.Errorf("RealTime(%+v) = %v", tc.r, got)
		}
	}
}

// TestCapacityTiny runs the search end to end on the tiny model (a few
// frames per request, bounded at 2 streams): whatever the machine's speed,
// the result is consistent with its own table and has the documented JSON
// shape.
func TestCapacityTiny(t *testing.T) {
	f, ref := tinyFamily(t)
	var progress strings.Builder
	c, err := Capacity(context.Background(), f, Config{
		Text: "Hello world.", RefPCM: ref.Interleaved(), Frames: 6, Runs: 1, RealTime: true,
		Voices: []string{"saved"}, Modes: []string{"streamed"}, Progress: &progress,
	}, CapacityConfig{Max: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Results) == 0 || !c.Complete || c.Capacity < 0 || c.Capacity > 2 || c.AtBound != (c.Capacity == 2) {
		t.Fatalf("result %+v", c)
	}
	for i, r := range c.Results {
		if i > 0 && r.Streams <= c.Results[i-1].Streams {
			t.Errorf("results not in increasing stream order: %+v", c.Results)
		}
		if RealTime(r) != (r.Streams <= c.Capacity) {
			t.Errorf("%d streams: real time %v, capacity %d", r.Streams, RealTime(r), c.Capacity)
		}
		if r.StreamLimit != r.Streams {
			t.Errorf("%d streams ran with limit %d: the search must turn the real-time limit off", r.Streams, r.StreamLimit)
		}
	}
	if strings.Count(progress.String(), "capacity:") != len(c.Results)+len(c.Repeated) {
		t.Errorf("progress:\n%s", progress.String())
	}
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]json.RawMessage
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"capacity", "at_bound", "complete", "results"} {
		if _, ok := back[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, j)
		}
	}
	if _, err := Capacity(context.Background(), f, Config{Voices: []string{"saved", "inline"}, Modes: []string{"streamed"}}, CapacityConfig{Max: 2}); err == nil {
		t.Error("two voice kinds accepted")
	}
}

// TestMeasureCount: a count that fails only by underruns is measured once
// more and the repeat decides; a pass or an RTF failure is final; an error
// of either measurement is returned.
func TestMeasureCount(t *testing.T) {
	pass := Result{Streams: 4, RTF: Percentiles{P95: 0.5}}
	stall := Result{Streams: 4, RTF: Percentiles{P95: 0.5}, Underruns: 3}
	slow := Result{Streams: 4, RTF: Percentiles{P95: 0.95}, Underruns: 40}
	boom := errors.New("boom")
	type m struct {
		r   Result
		err error
	}
	for _, tc := range []struct {
		name      string
		seq       []m
		want      Result
		wantFirst bool
		wantErr   error
		calls     int
	}{
		{"pass", []m{{pass, nil}}, pass, false, nil, 1},
		{"RTF failure is final", []m{{slow, nil}}, slow, false, nil, 1},
		{"stall then pass", []m{{stall, nil}, {pass, nil}}, pass, true, nil, 2},
		{"stall twice", []m{{stall, nil}, {stall, nil}}, stall, true, nil, 2},
		{"stall then RTF failure", []m{{stall, nil}, {slow, nil}}, slow, true, nil, 2},
		{"error", []m{{Result{}, boom}}, Result{}, false, boom, 1},
		{"stall then error", []m{{stall, nil}, {Result{}, boom}}, Result{}, true, boom, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			r, first, err := measureCount(func() (Result, error) {
				x := tc.seq[calls]
				calls++
				return x.r, x.err
			})
			if !errors.Is(err, tc.wantErr) || calls != tc.calls || (first != nil) != tc.wantFirst {
				t.Fatalf("err %v, calls %d, first %v; want %v, %d, first %v", err, calls, first, tc.wantErr, tc.calls, tc.wantFirst)
			}
			if err == nil && (r.RTF != tc.want.RTF || r.Underruns != tc.want.Underruns) {
				t.Errorf("result %+v, want %+v", r, tc.want)
			}
			if first != nil && (first.Underruns != stall.Underruns || first.RTF != stall.RTF) {
				t.Errorf("first %+v, want the stalled measurement", *first)
			}
		})
	}
}
