package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// MaxRealTimeRTF is the per-stream RTF p95 below which a stream count
// counts as real time in a capacity search: the margin under 1 leaves room
// for what a short benchmark does not see (other load, longer requests).
const MaxRealTimeRTF = 0.9

// RealTime reports whether every stream of r stayed real time: RTF p95
// below MaxRealTimeRTF and no underrun.
func RealTime(r Result) bool { return r.RTF.P95 < MaxRealTimeRTF && r.Underruns == 0 }

// CapacityConfig bounds a capacity search.
type CapacityConfig struct {
	// Max is the largest stream count tried (at least 1).
	Max int
	// Budget is the total time the search may take; once it is spent no
	// further count is started and the result is marked incomplete. 0: no
	// budget.
	Budget time.Duration
}

// CapacityResult is the outcome of a capacity search.
type CapacityResult struct {
	// Capacity is the largest stream count found to stay real time (see
	// RealTime); 0 if one stream does not.
	Capacity int `json:"capacity"`
	// AtBound is set when Capacity is CapacityConfig.Max: the machine may
	// hold more.
	AtBound bool `json:"at_bound"`
	// Complete is false when the budget or the context ended the search
	// early: Capacity is then only a lower bound.
	Complete bool `json:"complete"`
	// Results holds every measured count, in increasing stream order: for
	// a count measured twice, the repeat, which decided.
	Results []Result `json:"results"`
	// Repeated holds the first measurements of the counts that were
	// measured again (see measureCount), in the order they were taken:
	// never nil, so that JSON shows [] when there was none.
	Repeated []Result `json:"repeated"`
}

// measureCount measures one stream count. A measurement that fails only by
// underruns — every stream's RTF p95 under MaxRealTimeRTF — is taken once
// more and the repeat decides: such a failure is a stall of the whole
// machine (a virtual machine's pause, page faults on fresh memory) as
// often as a limit of the engine, and one should not end a search whose
// throughput passes; the first measurement is returned as first. A count
// that fails on RTF is not repeated.
func measureCount(measure func() (Result, error)) (r Result, first *Result, err error) {
	if r, err = measure(); err != nil {
		return r, nil, err
	}
	if RealTime(r) || r.RTF.P95 >= MaxRealTimeRTF {
		return r, nil, nil
	}
	f := r
	r, err = measure()
	return r, &f, err
}

// Capacity searches the largest number of concurrent streams that all stay
// real time for cfg's single mode and voice kind: it doubles the count
// from 1 until a count fails (or Max is reached), then bisects between the
// last count that passed and the first that failed. Each count is a full
// Run configuration (a fresh engine, cfg.Runs rounds). The engine's
// real-time limit is off whatever cfg.RealTime says: the search measures
// what the machine does with every stream admitted.
func Capacity(ctx context.Context, fam engine.Family, cfg Config, cc CapacityConfig) (CapacityResult, error) {
	if len(cfg.Modes) != 1 || len(cfg.Voices) != 1 {
		return CapacityResult{}, fmt.Errorf("capacity search: one mode and one voice kind, got %v and %v", cfg.Modes, cfg.Voices)
	}
	cfg.RealTime = false
	progress := cfg.Progress
	cfg.Progress = nil
	start := time.Now()
	over := func() bool {
		return ctx.Err() != nil || cc.Budget > 0 && time.Since(start) >= cc.Budget
	}
	var results []Result
	repeated := []Result{}
	report := func(r Result, verdict string) {
		if progress != nil {
			fmt.Fprintf(progress, "  capacity: %3d stream(s)  RTF p95 %.3f  underruns %4d  TTFA p95 %6.0f ms  %.1f frames/s  %s\n",
				r.Streams, r.RTF.P95, r.Underruns, r.TTFAms.P95, r.FramesPerS, verdict)
		}
	}
	probe := func(n int) (bool, error) {
		c := cfg
		c.Streams = []int{n}
		r, first, err := measureCount(func() (Result, error) {
			rs, err := Run(ctx, fam, c)
			if err != nil {
				return Result{}, err
			}
			return rs[0], nil
		})
		if first != nil {
			repeated = append(repeated, *first)
			report(*first, "underruns only: measuring again")
		}
		if err != nil {
			return false, err
		}
		results = append(results, r)
		ok := RealTime(r)
		verdict := "real time"
		if !ok {
			verdict = "NOT real time"
		}
		report(r, verdict)
		return ok, nil
	}
	capacity, complete, err := searchCapacity(max(cc.Max, 1), probe, over)
	sort.SliceStable(results, func(i, j int) bool { return results[i].Streams < results[j].Streams })
	res := CapacityResult{Capacity: capacity, AtBound: capacity == max(cc.Max, 1), Complete: complete, Results: results, Repeated: repeated}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

// searchCapacity returns the largest n in [1, maxN] for which pass(n) holds,
// assuming pass holds up to some count and fails beyond it; 0 if pass(1)
// fails. Counts are probed 1, 2, 4, … (then maxN) until one fails, then
// bisected between the last pass and the first failure, so every probed
// count at or below the answer passed and every one above it failed, even
// when noise makes pass non-monotone. stop is asked before each probe; if
// it says stop, the search ends with the best count so far and complete
// false.
func searchCapacity(maxN int, pass func(n int) (bool, error), stop func() bool) (capacity int, complete bool, err error) {
	lo, hi := 0, maxN+1 // lo passed (0: nothing yet), hi failed (maxN+1: nothing yet)
	for n := 1; ; n *= 2 {
		n = min(n, maxN)
		if stop() {
			return lo, false, nil
		}
		ok, err := pass(n)
		if err != nil {
			return lo, false, err
		}
		if !ok {
			hi = n
			break
		}
		lo = n
		if n == maxN {
			return lo, true, nil
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if stop() {
			return lo, false, nil
		}
		ok, err := pass(mid)
		if err != nil {
			return lo, false, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true, nil
}

// WriteCapacity prints a capacity result: the per-count table and the
// capacity with how it was bounded.
func WriteCapacity(w io.Writer, c CapacityResult) {
	WriteTable(w, c.Results)
	for _, r := range c.Repeated {
		fmt.Fprintf(w, "(%d stream(s) were measured twice: the first time RTF p95 %.3f with %d underrun(s), the repeat above decided)\n", r.Streams, r.RTF.P95, r.Underruns)
	}
	note := ""
	switch {
	case !c.Complete:
		note = " (search cut short by its time budget: a lower bound)"
	case c.AtBound:
		note = " (the search's upper bound: the machine may hold more; raise --capacity-max)"
	}
	fmt.Fprintf(w, "capacity: %d real-time stream(s) (every stream RTF p95 < %.2f and no underrun)%s\n", c.Capacity, MaxRealTimeRTF, note)
}
