package codec_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
)

func realConfigBytes(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "real", "codec-config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRealConfig(t *testing.T) {
	c, err := codec.ParseConfig(realConfigBytes(t))
	if err != nil {
		t.Fatal(err)
	}
	enc, dec := c.Contexts()
	// 400/200/100/50 Hz × 4/6/8/10 s and 50/100/200/400 Hz × 10/8/6/4 s.
	if diff := cmp.Diff([]int{1600, 1200, 800, 500}, enc); diff != "" {
		t.Errorf("encoder contexts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{500, 800, 1200, 1600}, dec); diff != "" {
		t.Errorf("decoder contexts (-want +got):\n%s", diff)
	}
	if c.SampleRate != 48000 || c.DownsampleRate != 3840 || c.Channels != 2 || !c.Interleave || c.FrameRate() != 12.5 {
		t.Errorf("geometry: %+v", c)
	}
	want := codec.QuantizerConfig{InputDim: 768, RVQDim: 512, OutputDim: 768, NumQuantizers: 16, CodebookSize: 1024, CodebookDim: 8}
	if c.Quantizer != want || c.QuantizerType != "rlfq" {
		t.Errorf("quantizer %+v %q", c.Quantizer, c.QuantizerType)
	}
	var layers []int
	for _, m := range append(c.Encoder, c.Decoder...) {
		if m.Kind == codec.KindTransformer {
			layers = append(layers, m.Layers)
			if m.DModel != 256 || m.Heads != 4 || m.FFDim != 1024 || !m.Causal || m.Positional != codec.PosRoPE || !m.HasLayerScale || m.LayerScale != 0.01 {
				t.Errorf("transformer %+v", m)
			}
		}
	}
	if diff := cmp.Diff([]int{4, 2, 2, 4, 4, 2, 2, 4}, layers); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
}

// TestReversedDecoderKwargs builds the decoder from reversed_decoder_kwargs
// when decoder_kwargs is absent, as upstream does.
func TestReversedDecoderKwargs(t *testing.T) {
	full, err := codec.ParseConfig(realConfigBytes(t))
	if err != nil {
		t.Fatal(err)
	}
	b := editJSON(t, realConfigBytes(t), func(m map[string]any) { delete(m, "decoder_kwargs") })
	rev, err := codec.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full.Decoder, rev.Decoder); diff != "" {
		t.Fatalf("decoder from reversed_decoder_kwargs (-decoder_kwargs +reversed):\n%s", diff)
	}
}

// TestContextFallback: a transformer without context_duration uses
// causal_transformer_context_duration (10 s), not the encoder minimum (4 s).
func TestContextFallback(t *testing.T) {
	b := editJSON(t, realConfigBytes(t), func(m map[string]any) {
		delete(module(m, "decoder_kwargs", 7), "context_duration")
		m["causal_transformer_context_duration"] = 2.5
	})
	c, err := codec.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Decoder[7].Context; got != 1000 {
		t.Fatalf("decoder[7] context %d, want 400 Hz × 2.5 s = 1000", got)
	}
}

// TestPythonLiteralsInStrings: NaN and Infinity inside strings are text.
func TestPythonLiteralsInStrings(t *testing.T) {
	b := editJSON(t, realConfigBytes(t), func(m map[string]any) {
		m["note"] = `NaN "Infinity" -Infinity \" NaN`
		m["attention_implementation"] = "NaN"
	})
	if _, err := codec.ParseConfig(b); err != nil {
		t.Fatal(err)
	}
}

func editJSON(t testing.TB, b []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func module(m map[string]any, list string, i int) map[string]any {
	return m[list].([]any)[i].(map[string]any)
}

func TestConfigValidation(t *testing.T) {
	set := func(list string, i int, key string, v any) func(map[string]any) {
		return func(m map[string]any) { module(m, list, i)[key] = v }
	}
	tests := []struct {
		name  string
		edit  func(map[string]any)
		raw   func(string) string // textual edit after edit
		field string
	}{
		{name: "NaN context", raw: func(s string) string {
			return strings.Replace(s, `"context_duration":6`, `"context_duration":NaN`, 1)
		}, field: "decoder_kwargs[5].context_duration"},
		{name: "Infinity max_period", raw: func(s string) string {
			return strings.Replace(s, `"max_period":10000`, `"max_period":Infinity`, 1)
		}, field: "decoder_kwargs[1].max_period"},
		{name: "-Infinity positional scale", edit: set("encoder_kwargs", 1, "positional_scale", 1.0), raw: func(s string) string {
			return strings.Replace(s, `"positional_scale":1`, `"positional_scale":-Infinity`, 1)
		}, field: "encoder_kwargs[1].positional_scale"},
		{name: "NaN top level", raw: func(s string) string {
			return strings.Replace(s, `"causal_transformer_context_duration":10`, `"causal_transformer_context_duration":NaN`, 1)
		}, field: "causal_transformer_context_duration"},
		{name: "overflowing number", raw: func(s string) string {
			return strings.Replace(s, `"context_duration":8`, `"context_duration":1e999`, 1)
		}, field: "decoder_kwargs[3].context_duration"},
		{name: "negative context", edit: set("decoder_kwargs", 5, "context_duration", -6.0), field: "decoder_kwargs[5].context_duration"},
		{name: "zero context", edit: set("decoder_kwargs", 5, "context_duration", 0), field: "decoder_kwargs[5].context_duration"},
		{name: "window rounds to zero", edit: set("encoder_kwargs", 7, "context_duration", 1e-4), field: "encoder_kwargs[7].context_duration"},
		{name: "window too large", edit: set("encoder_kwargs", 1, "context_duration", 1e6), field: "encoder_kwargs[1].context_duration"},
		{name: "unknown positional", edit: set("decoder_kwargs", 7, "positional_embedding", "alibi"), field: "decoder_kwargs[7].positional_embedding"},
		{name: "heads do not divide", edit: set("encoder_kwargs", 3, "num_heads", 3), field: "encoder_kwargs[3].num_heads"},
		{name: "odd rope head dim", edit: set("encoder_kwargs", 3, "num_heads", 256), field: "encoder_kwargs[3].positional_embedding"},
		{name: "zero heads", edit: set("encoder_kwargs", 3, "num_heads", 0), field: "encoder_kwargs[3].num_heads"},
		{name: "fractional layers", edit: set("decoder_kwargs", 1, "num_layers", 1.5), field: "decoder_kwargs[1].num_layers"},
		{name: "string dimension", edit: set("decoder_kwargs", 1, "d_model", "256"), field: "d_model"},
		{name: "missing d_model", edit: func(m map[string]any) { delete(module(m, "encoder_kwargs", 1), "d_model") }, field: "encoder_kwargs[1].d_model"},
		{name: "dims do not chain (encoder)", edit: set("encoder_kwargs", 3, "input_dimension", 767), field: "encoder_kwargs[3].input_dimension"},
		{name: "dims do not chain (decoder)", edit: set("decoder_kwargs", 1, "input_dimension", 191), field: "decoder_kwargs[1].input_dimension"},
		{name: "decoder ends too wide", edit: set("decoder_kwargs", 7, "output_dimension", 480), field: "decoder_kwargs"},
		{name: "patch does not divide", edit: set("decoder_kwargs", 2, "patch_size", 5), field: "decoder_kwargs[2].patch_size"},
		{name: "patch product", edit: func(m map[string]any) { m["downsample_rate"] = 1920 }, field: "encoder_kwargs"},
		{name: "quantizer input", edit: func(m map[string]any) { m["quantizer_kwargs"].(map[string]any)["input_dim"] = 512 }, field: "quantizer_kwargs.input_dim"},
		{name: "quantizer type", edit: func(m map[string]any) { m["quantizer_kwargs"].(map[string]any)["quantizer_type"] = "rvq" }, field: "quantizer_type"},
		{name: "negative codebook", edit: func(m map[string]any) { m["quantizer_kwargs"].(map[string]any)["codebook_size"] = -1 }, field: "quantizer_kwargs.codebook_size"},
		{name: "unknown module", edit: set("encoder_kwargs", 0, "module_type", "Conv1d"), field: "encoder_kwargs[0].module_type"},
		{name: "missing module type", edit: func(m map[string]any) { delete(module(m, "encoder_kwargs", 2), "module_type") }, field: "encoder_kwargs[2].module_type"},
		{name: "non-causal decoder", edit: set("decoder_kwargs", 3, "causal", false), field: "decoder_kwargs[3].causal"},
		{name: "rms norm", edit: set("decoder_kwargs", 3, "norm", "rms_norm"), field: "decoder_kwargs[3].norm"},
		{name: "gating", edit: set("encoder_kwargs", 5, "gating", "silu"), field: "encoder_kwargs[5].gating"},
		{name: "sample rates disagree", edit: func(m map[string]any) { m["sample_rate"] = 44100 }, field: "sample_rate"},
		{name: "negative sample rate", edit: func(m map[string]any) { m["sampling_rate"], m["sample_rate"] = -48000, -48000 }, field: "sampling_rate"},
		{name: "zero channels", edit: func(m map[string]any) { m["number_channels"] = 0 }, field: "number_channels"},
		{name: "no encoder", edit: func(m map[string]any) { delete(m, "encoder_kwargs") }, field: "encoder_kwargs"},
		{name: "empty decoder", edit: func(m map[string]any) { m["decoder_kwargs"] = []any{} }, field: "decoder_kwargs"},
		{name: "no decoder", edit: func(m map[string]any) { delete(m, "decoder_kwargs"); delete(m, "reversed_decoder_kwargs") }, field: "decoder_kwargs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := realConfigBytes(t)
			if tc.edit != nil {
				b = editJSON(t, b, tc.edit)
			} else {
				b = editJSON(t, b, func(map[string]any) {})
			}
			if tc.raw != nil {
				s := tc.raw(string(b))
				if s == string(b) {
					t.Fatal("textual edit did not apply")
				}
				b = []byte(s)
			}
			_, err := codec.ParseConfig(b)
			if err == nil {
				t.Fatal("ParseConfig accepted an invalid config")
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name %q", err, tc.field)
			}
			var ce *codec.ConfigError
			if tc.name != "string dimension" && !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
		})
	}
}

func TestConfigNotJSON(t *testing.T) {
	for _, in := range []string{"", "null", "[]", "{", `{"encoder_kwargs": 3}`} {
		if _, err := codec.ParseConfig([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
