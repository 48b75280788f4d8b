package engine

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistry registers a family of its own (model_type "test_family")
// and opens directories of several kinds through the registry.
func TestRegistry(t *testing.T) {
	loaded := 0
	Register(Registration{
		ModelType: "test_family",
		Detect:    func(dir string) bool { return ModelType(dir) == "test_family" },
		Locate: func(ctx context.Context, dir string, o OpenOptions) ([]Part, error) {
			return []Part{{Role: "weights", Dir: dir}}, nil
		},
		Load: func(parts []Part, o OpenOptions) (Family, error) {
			loaded++
			return nil, errors.New("loaded " + parts[0].Dir + " as " + o.Name)
		},
	})
	if fs := Families(); !contains(fs, "test_family") {
		t.Fatalf("Families() = %v, want test_family among them", fs)
	}
	root := t.TempDir()
	mk := func(name, config string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if config != "" {
			if err := os.WriteFile(filepath.Join(d, "config.json"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	ours := mk("ours", `{"model_type": "test_family"}`)
	other := mk("other", `{"model_type": "llama"}`)
	broken := mk("broken", `{"model_type": `)
	empty := mk("empty", "")
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)

	for _, tc := range []struct {
		model, wantErr string
	}{
		{ours, "loaded " + ours + " as " + ours},
		{other, `model_type "llama" is not supported (supported: `},
		{broken, "config.json"},
		{empty, "no config.json (is this a model directory?)"},
		{file, "is not a directory"},
		{filepath.Join(root, "missing"), "does not exist"},
		{"org/name", "does not exist"}, // no resolver: hub ids do not resolve
	} {
		_, _, err := Open(context.Background(), tc.model, OpenOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Open(%s): %v, want an error containing %q", tc.model, err, tc.wantErr)
		}
	}
	if loaded != 1 {
		t.Errorf("Load called %d times, want 1", loaded)
	}
	// A hub id goes through the resolver.
	_, parts, err := Locate(context.Background(), "org/name@main", OpenOptions{Resolve: func(ctx context.Context, id string) (string, error) {
		if id != "org/name@main" {
			t.Errorf("resolver got %q", id)
		}
		return ours, nil
	}})
	if err != nil || len(parts) != 1 || parts[0].Dir != ours {
		t.Errorf("Locate via resolver: %v, %v", parts, err)
	}
	for _, bad := range []Registration{
		{ModelType: "test_family", Detect: func(string) bool { return false }, Locate: func(context.Context, string, OpenOptions) ([]Part, error) { return nil, nil }, Load: func([]Part, OpenOptions) (Family, error) { return nil, nil }},
		{ModelType: "incomplete"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s) did not panic", bad.ModelType)
				}
			}()
			Register(bad)
		}()
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestParamsValidate(t *testing.T) {
	ok := Params{Temperature: 0.8, TopP: 0.95, TopK: 25, RepetitionPenalty: 1.2, MaxFrames: 375, MaxTextTokens: 75}
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name  string
		edit  func(*Params)
		param string
	}{
		{"zero temperature", func(p *Params) { p.Temperature = 0 }, "temperature"},
		{"temperature above 5", func(p *Params) { p.Temperature = 5.01 }, "temperature"},
		{"NaN temperature", func(p *Params) { p.Temperature = nan }, "temperature"},
		{"top_p 0", func(p *Params) { p.TopP = 0 }, "top_p"},
		{"top_p above 1", func(p *Params) { p.TopP = 1.5 }, "top_p"},
		{"negative top_k", func(p *Params) { p.TopK = -1 }, "top_k"},
		{"huge top_k", func(p *Params) { p.TopK = MaxTopK + 1 }, "top_k"},
		{"infinite penalty", func(p *Params) { p.RepetitionPenalty = inf }, "repetition_penalty"},
		{"zero penalty", func(p *Params) { p.RepetitionPenalty = 0 }, "repetition_penalty"},
		{"zero frames", func(p *Params) { p.MaxFrames = 0 }, "max_frames"},
		{"zero text tokens", func(p *Params) { p.MaxTextTokens = 0 }, "max_text_tokens"},
	} {
		p := ok
		tc.edit(&p)
		var pe *ParamError
		if err := p.Validate(); !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: Validate() = %v, want a ParamError for %s", tc.name, err, tc.param)
		}
	}
	for _, edge := range []func(*Params){
		func(p *Params) { p.Temperature = 5 }, func(p *Params) { p.TopP = 1 }, func(p *Params) { p.TopK = 0 },
		func(p *Params) { p.TopK = MaxTopK }, func(p *Params) { p.RepetitionPenalty = 10 },
	} {
		p := ok
		edge(&p)
		if err := p.Validate(); err != nil {
			t.Errorf("edge value rejected: %v", err)
		}
	}
}
