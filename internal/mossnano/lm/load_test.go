package lm

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/weights"
)

// copyDir copies a flat checkpoint directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// rewrite loads dir/model.safetensors, lets edit change the tensor list and
// writes it back (dropping any index file).
func rewrite(t *testing.T, dir string, edit func([]weights.Tensor) []weights.Tensor) {
	t.Helper()
	f, err := weights.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var ts []weights.Tensor
	for _, n := range f.Names() {
		tt := *f.Tensor(n)
		tt.Data = append([]byte(nil), tt.Data...)
		ts = append(ts, tt)
	}
	f.Close()
	ts = edit(ts)
	os.Remove(filepath.Join(dir, "model.safetensors.index.json"))
	if err := weights.WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLoadTorchBin(t *testing.T) {
	m, err := Load("../../weights/testdata/torch/tiny-a-lm", Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	g := readGolden(t, "tiny-a", "canonical.json")
	gen, err := m.NewGeneration(g.RefCodes, nil, g.Text, goldenParams(g, 75))
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := run(t, gen)
	if diff := cmp.Diff(g.Frames, frames); diff != "" {
		t.Fatalf("frames from pytorch_model.bin (-want +got):\n%s", diff)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings: %v", m.Warnings)
	}
}

func TestLoadF32Widening(t *testing.T) {
	m, err := Load("../../../testdata/tiny-a/lm", Options{KeepBF16: false})
	if err != nil {
		t.Fatal(err)
	}
	if m.wte.IsBF16() {
		t.Fatal("KeepBF16=false kept bf16")
	}
	g := readGolden(t, "tiny-a", "canonical.json")
	gen, _ := m.NewGeneration(g.RefCodes, nil, g.Text, goldenParams(g, 75))
	frames, _ := run(t, gen)
	if !cmp.Equal(g.Frames, frames) {
		t.Fatal("f32-widened weights changed the frames")
	}
	mb := loadFixture(t, "tiny-a")
	if !mb.wte.IsBF16() || mb.WeightBytes() >= m.WeightBytes() {
		t.Fatalf("bf16 weights: %d bytes vs f32 %d", mb.WeightBytes(), m.WeightBytes())
	}
}

func TestLoadErrors(t *testing.T) {
	src := "../../../testdata/tiny-b/lm"
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"missing key", func(t *testing.T, d string) {
			rewrite(t, d, func(ts []weights.Tensor) []weights.Tensor {
				var out []weights.Tensor
				for _, x := range ts {
					if x.Name != "transformer.h.1.mlp.fc_in.bias" {
						out = append(out, x)
					}
				}
				return out
			})
		}, `missing tensor "transformer.h.1.mlp.fc_in.bias"`},
		{"wrong shape", func(t *testing.T, d string) {
			rewrite(t, d, func(ts []weights.Tensor) []weights.Tensor {
				for i := range ts {
					if ts[i].Name == "audio_embeddings.3.weight" {
						ts[i].Shape = []int{ts[i].Shape[0] / 2, ts[i].Shape[1]}
						ts[i].Data = ts[i].Data[:len(ts[i].Data)/2]
					}
				}
				return ts
			})
		}, `"audio_embeddings.3.weight" has shape [64 64], config implies [128 64]`},
		{"unknown dtype", func(t *testing.T, d string) {
			rewrite(t, d, func(ts []weights.Tensor) []weights.Tensor {
				for i := range ts {
					if ts[i].Name == "transformer.ln_f.bias" {
						ts[i].DType = weights.I32
					}
				}
				return ts
			})
		}, `"transformer.ln_f.bias" has dtype I32`},
		{"truncated weights", func(t *testing.T, d string) {
			p := filepath.Join(d, "model.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-1000], 0o644)
		}, "outside"},
		{"header lies about its length", func(t *testing.T, d string) {
			p := filepath.Join(d, "model.safetensors")
			b, _ := os.ReadFile(p)
			binary.LittleEndian.PutUint64(b, uint64(len(b)))
			os.WriteFile(p, b, 0o644)
		}, "header length"},
		{"missing tokenizer", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "tokenizer.model")) }, "tokenizer"},
		{"garbage tokenizer", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "tokenizer.model"), []byte("\x0a\xff\xff\xff\xff"), 0o644)
		}, "tokenizer"},
		{"missing config", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "config.json")) }, "config.json"},
		{"NaN in config", func(t *testing.T, d string) {
			editConfig(t, d, `"layer_norm_epsilon": 1e-05`, `"layer_norm_epsilon": NaN`)
		}, "NaN or Infinity"},
		{"unknown model_type", func(t *testing.T, d string) {
			editConfig(t, d, `"model_type": "moss_tts_nano"`, `"model_type": "qwen3_tts"`)
		}, `model_type "qwen3_tts"`},
		{"class-default n_vq missing", func(t *testing.T, d string) { editConfig(t, d, `"n_vq": 8,`, ``) }, `missing field "n_vq"`},
		{"bad heads", func(t *testing.T, d string) { editConfig(t, d, `"n_head": 4`, `"n_head": 5`) }, "multiple of n_head"},
		{"pad collides", func(t *testing.T, d string) { editConfig(t, d, `"audio_pad_token_id": 128`, `"audio_pad_token_id": 5`) }, "collides"},
		{"no weights", func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, "model.safetensors"))
			os.Remove(filepath.Join(d, "model.safetensors.index.json"))
		}, "no weights"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := copyDir(t, src)
			tc.setup(t, d)
			_, err := Load(d, Options{KeepBF16: true})
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant LoadError containing %q", err, tc.want)
			}
		})
	}
}

func editConfig(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("config has no %q", old)
	}
	os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

func FuzzParseConfig(f *testing.F) {
	for _, p := range []string{"../../../testdata/tiny-a/lm/config.json", "../../../testdata/real/lm-config.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model_type":"moss_tts_nano","gpt2_config":{"n_embd":-1}}`))
	f.Add([]byte(`{"model_type":"moss_tts_nano","n_vq":1e9}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, "config.json")
		if err != nil {
			return
		}
		if c.Hidden() <= 0 || c.HeadDim()*c.GPT2.NHead != c.Hidden() || len(c.AudioCodebookSizes) != c.NVQ {
			t.Fatalf("accepted inconsistent config: %+v", c)
		}
	})
}
