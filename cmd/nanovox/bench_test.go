package main

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBenchCapacityJSON runs `nanovox bench --capacity --json` on the tiny
// model and checks the object's shape: a capacity consistent with the
// per-count results it stands beside.
func TestBenchCapacityJSON(t *testing.T) {
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	r := runBin(t, nil, nil, "bench", "--model", lm, "--codec", cd, "--capacity", "--capacity-max", "2",
		"--frames", "4", "--runs", "1", "--text", "Hello world.", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Capacity *int  `json:"capacity"`
		Complete *bool `json:"complete"`
		AtBound  bool  `json:"at_bound"`
		Mode     string
		Voice    string
		Host     struct{ Arch, Kernels string }
		Results  []struct {
			Mode      string
			Voice     string
			Streams   int
			Underruns int
			RTF       struct{ P95 float64 }
		}
		Repeated *[]struct {
			Streams   int
			Underruns int
			RTF       struct{ P95 float64 }
		}
	}
	if err := json.Unmarshal(r.stdout, &out); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if out.Capacity == nil || out.Complete == nil || !*out.Complete || len(out.Results) == 0 || out.Repeated == nil || out.Mode != "streamed" || out.Voice != "saved" || out.Host.Arch != runtime.GOARCH || out.Host.Kernels == "" {
		t.Fatalf("JSON: %s", r.stdout)
	}
	for _, res := range out.Results {
		rt := res.RTF.P95 < 0.9 && res.Underruns == 0
		if res.Mode != "streamed" || res.Voice != "saved" || rt != (res.Streams <= *out.Capacity) {
			t.Errorf("result %+v against capacity %d", res, *out.Capacity)
		}
	}
	for _, res := range *out.Repeated { // first measurements that failed by underruns alone
		if res.Underruns == 0 || res.RTF.P95 >= 0.9 {
			t.Errorf("repeated %+v: only a count that failed by underruns alone is measured again", res)
		}
	}
	if out.AtBound != (*out.Capacity == 2) {
		t.Errorf("at_bound %v with capacity %d of 2", out.AtBound, *out.Capacity)
	}
	if !strings.Contains(string(r.stderr), "real-time limit off") {
		t.Errorf("stderr does not say the limit is off: %s", r.stderr)
	}
}

func TestBenchCapacityFlags(t *testing.T) {
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--streams", "4"}, "--streams and --capacity exclude each other"},
		{[]string{"--capacity-max", "0"}, "--capacity-max must be at least 1"},
		{[]string{"--voices", "saved,inline"}, "one mode and one voice kind"},
		{[]string{"--modes", "buffered,streamed"}, "one mode and one voice kind"},
	} {
		r := runBin(t, nil, nil, append([]string{"bench", "--model", lm, "--codec", cd, "--capacity"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(string(r.stderr), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure mentioning %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
