// Package family opens a speech model of any supported family: it resolves
// the model and codec locations, peeks model_type in config.json and loads
// the matching implementation behind the engine.Family interface.
package family

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/family/mossnano"
)

// loaders maps config.json model_type to the family's loader.
var loaders = map[string]func(lmDir, codecDir string, o Options) (engine.Family, error){
	"moss_tts_nano": func(lmDir, codecDir string, o Options) (engine.Family, error) {
		return mossnano.Load(lmDir, codecDir, mossnano.Options{KeepBF16: o.KeepBF16, BF16Dot: o.BF16Dot, Int8: o.Int8, Name: o.Name})
	},
}

// Supported returns the model types that can be loaded, sorted.
func Supported() []string {
	var out []string
	for k := range loaders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Options tune Open.
type Options struct {
	// KeepBF16 keeps bfloat16 weights as bfloat16 in memory.
	KeepBF16 bool
	// BF16Dot multiplies the model's big matrices with bfloat16 dot products
	// (inputs rounded to bfloat16): faster batched steps on CPUs with
	// AVX512_BF16, results no longer equal to the float32 reference.
	BF16Dot bool
	// Int8 multiplies the language model's matrices with int8 products
	// (weights and inputs quantized per row) and the codec's like BF16Dot
	// where the CPU has AVX512_BF16: the fastest mode on CPUs with
	// AVX512_VNNI or AVX-VNNI, the least exact.
	Int8 bool
	// Name is the display name of the model (defaults to the model argument).
	Name string
	// Resolve turns a model argument that is not a local directory (a hub
	// repo id) into a directory. Nil means only local directories work.
	Resolve func(ctx context.Context, id string) (string, error)
}

// Paths are the resolved directories of a model.
type Paths struct {
	LM, Codec string
	ModelType string
}

// Resolve finds the LM and codec directories for the arguments. model may be
// a directory holding config.json, a directory with lm/ and codec/
// subdirectories (as `nanovox dev mkmodel` writes), or a hub id. codec may be
// empty: then audio_tokenizer/ inside the LM directory, the sibling codec/ of
// a dev-model directory, or the LM config's
// audio_tokenizer_pretrained_name_or_path is used.
func Resolve(ctx context.Context, model, codec string, o Options) (Paths, error) {
	var p Paths
	lm, err := resolveDir(ctx, model, o)
	if err != nil {
		return p, err
	}
	if _, err := os.Stat(filepath.Join(lm, "config.json")); err != nil {
		if fi, err2 := os.Stat(filepath.Join(lm, "lm", "config.json")); err2 == nil && !fi.IsDir() {
			if codec == "" {
				if fi, err := os.Stat(filepath.Join(lm, "codec")); err == nil && fi.IsDir() {
					codec = filepath.Join(lm, "codec")
				}
			}
			lm = filepath.Join(lm, "lm")
		} else {
			return p, fmt.Errorf("model %s: no config.json (is this a model directory?)", lm)
		}
	}
	p.LM = lm
	cfg, err := os.ReadFile(filepath.Join(lm, "config.json"))
	if err != nil {
		return p, fmt.Errorf("model %s: %w", lm, err)
	}
	var head struct {
		ModelType  string `json:"model_type"`
		CodecModel string `json:"audio_tokenizer_pretrained_name_or_path"`
	}
	if err := json.Unmarshal(cfg, &head); err != nil {
		return p, fmt.Errorf("model %s: config.json: %w", lm, err)
	}
	if _, ok := loaders[head.ModelType]; !ok {
		return p, fmt.Errorf("model %s: model_type %q is not supported (supported: %s)", lm, head.ModelType, strings.Join(Supported(), ", "))
	}
	p.ModelType = head.ModelType
	switch {
	case codec != "":
		p.Codec, err = resolveDir(ctx, codec, o)
	case isDir(filepath.Join(lm, "audio_tokenizer")):
		p.Codec = filepath.Join(lm, "audio_tokenizer")
	case head.CodecModel != "":
		p.Codec, err = resolveDir(ctx, head.CodecModel, o)
		if err != nil {
			err = fmt.Errorf("codec (from the model's audio_tokenizer_pretrained_name_or_path; pass --codec DIR to override): %w", err)
		}
	default:
		err = fmt.Errorf("model %s names no codec: pass --codec DIR", lm)
	}
	return p, err
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func resolveDir(ctx context.Context, arg string, o Options) (string, error) {
	if isDir(arg) {
		return arg, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return "", fmt.Errorf("%s is not a directory", arg)
	}
	if o.Resolve == nil || !looksLikeRepoID(arg) {
		return "", fmt.Errorf("model directory %s does not exist", arg)
	}
	return o.Resolve(ctx, arg)
}

// looksLikeRepoID reports whether s could be a hub id (org/name[@rev]) rather
// than a path.
func looksLikeRepoID(s string) bool {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") {
		return false
	}
	base, _, _ := strings.Cut(s, "@")
	return strings.Count(base, "/") == 1
}

// Open resolves and loads a model.
func Open(ctx context.Context, model, codec string, o Options) (engine.Family, Paths, error) {
	p, err := Resolve(ctx, model, codec, o)
	if err != nil {
		return nil, p, err
	}
	if o.Name == "" {
		o.Name = model
	}
	f, err := loaders[p.ModelType](p.LM, p.Codec, o)
	return f, p, err
}
