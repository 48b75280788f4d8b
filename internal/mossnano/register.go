package mossnano

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/mossnano/lm"
)

func init() {
	engine.Register(engine.Registration{
		ModelType: lm.ModelType,
		Detect:    detect,
		Locate:    locate,
		Load: func(parts []engine.Part, o engine.OpenOptions) (engine.Family, error) {
			return Load(parts[0].Dir, parts[1].Dir, Options{KeepBF16: o.KeepBF16, Matmul: o.Matmul, Name: o.Name})
		},
	})
}

// The layouts a MOSS-TTS-Nano model comes in:
//   - the release: the language model's directory (config.json with
//     model_type moss_tts_nano), naming its codec by hub id in
//     audio_tokenizer_pretrained_name_or_path;
//   - the same with the codec inside it, in audio_tokenizer/;
//   - `nanovox dev mkmodel`'s: a directory with lm/ and codec/.
//
// An explicit codec (--codec) overrides the second and third rules.

// lmDir returns the language model's directory of the model in dir.
func lmDir(dir string) string {
	if engine.ModelType(dir) == "" && engine.ModelType(filepath.Join(dir, "lm")) == lm.ModelType {
		return filepath.Join(dir, "lm")
	}
	return dir
}

func detect(dir string) bool { return engine.ModelType(lmDir(dir)) == lm.ModelType }

func locate(ctx context.Context, dir string, o engine.OpenOptions) ([]engine.Part, error) {
	lmd := lmDir(dir)
	codec := o.Codec
	if codec == "" && lmd != dir && engine.IsDir(filepath.Join(dir, "codec")) {
		codec = filepath.Join(dir, "codec")
	}
	cfg, err := os.ReadFile(filepath.Join(lmd, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", lmd, err)
	}
	var head struct {
		CodecModel string `json:"audio_tokenizer_pretrained_name_or_path"`
	}
	if err := json.Unmarshal(cfg, &head); err != nil {
		return nil, fmt.Errorf("model %s: config.json: %w", lmd, err)
	}
	var codecDir string
	switch {
	case codec != "":
		codecDir, err = engine.ResolveDir(ctx, codec, o)
	case engine.IsDir(filepath.Join(lmd, "audio_tokenizer")):
		codecDir = filepath.Join(lmd, "audio_tokenizer")
	case head.CodecModel != "":
		codecDir, err = engine.ResolveDir(ctx, head.CodecModel, o)
		if err != nil {
			err = fmt.Errorf("codec (from the model's audio_tokenizer_pretrained_name_or_path; pass --codec DIR to override): %w", err)
		}
	default:
		err = fmt.Errorf("model %s names no codec: pass --codec DIR", lmd)
	}
	if err != nil {
		return nil, err
	}
	return []engine.Part{{Role: "language model", Dir: lmd}, {Role: "codec", Dir: codecDir}}, nil
}
