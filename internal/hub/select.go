package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Files the loader reads, by name.
const (
	configFile        = "config.json"
	tokenizerFile     = "tokenizer.model"
	safetensorsFile   = "model.safetensors"
	safetensorsIndex  = "model.safetensors.index.json"
	pytorchFile       = "pytorch_model.bin"
	pytorchIndex      = "pytorch_model.bin.index.json"
	safetensorsSuffix = ".safetensors"
)

var (
	// ErrNoConfig is returned (wrapped) by [SelectFiles] when there is no config.json.
	ErrNoConfig = errors.New("no " + configFile)
	// ErrNoWeights is returned (wrapped) by [SelectFiles] when no weights file is found.
	ErrNoWeights = errors.New("no weights (" + safetensorsFile + ", " + safetensorsIndex +
		", *" + safetensorsSuffix + ", " + pytorchFile + " or " + pytorchIndex + ")")
)

// SelectFiles picks from a repository's file list (slash-separated names relative
// to the repository root) the files a model loader needs, in download order:
//
//   - config.json (required);
//   - tokenizer.model, if present;
//   - the weights, by the first rule that applies: model.safetensors; else
//     model.safetensors.index.json followed by every shard its weight_map names;
//     else every top-level *.safetensors; else pytorch_model.bin; else
//     pytorch_model.bin.index.json and its shards.
//
// readIndex is called with the name of an index file and returns the shard names
// it lists (typically: fetch the file, then [ParseIndex]); it is called at most
// once. Shards are returned as listed, whether or not they are in files: checking
// that is the caller's business. Nothing else (README, code, ONNX exports) is
// ever selected.
func SelectFiles(files []string, readIndex func(name string) ([]string, error)) ([]string, error) {
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f] = true
	}
	if !have[configFile] {
		return nil, fmt.Errorf("select files: %w", ErrNoConfig)
	}
	out := []string{configFile}
	if have[tokenizerFile] {
		out = append(out, tokenizerFile)
	}
	withIndex := func(index string) ([]string, error) {
		shards, err := readIndex(index)
		if err != nil {
			return nil, fmt.Errorf("select files: read %s: %w", index, err)
		}
		if len(shards) == 0 {
			return nil, fmt.Errorf("select files: %s lists no shards", index)
		}
		out = append(out, index)
		for _, s := range shards {
			if !validFileName(s) {
				return nil, fmt.Errorf("select files: %s lists an invalid shard name %q", index, s)
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out, nil
	}
	switch {
	case have[safetensorsFile]:
		return append(out, safetensorsFile), nil
	case have[safetensorsIndex]:
		return withIndex(safetensorsIndex)
	}
	var st []string
	for _, f := range files {
		if strings.HasSuffix(f, safetensorsSuffix) && !strings.Contains(f, "/") && !slices.Contains(st, f) {
			st = append(st, f)
		}
	}
	if len(st) > 0 {
		slices.Sort(st)
		return append(out, st...), nil
	}
	switch {
	case have[pytorchFile]:
		return append(out, pytorchFile), nil
	case have[pytorchIndex]:
		return withIndex(pytorchIndex)
	}
	return nil, fmt.Errorf("select files: %w", ErrNoWeights)
}

// ParseIndex parses a sharded-checkpoint index (model.safetensors.index.json or
// pytorch_model.bin.index.json) and returns the distinct shard file names of its
// weight_map, sorted. Every name must be a safe relative path.
func ParseIndex(data []byte) ([]string, error) {
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("parse index: %w", err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, errors.New("parse index: no weight_map entries")
	}
	seen := make(map[string]bool)
	var shards []string
	for tensor, file := range idx.WeightMap {
		if !validFileName(file) {
			return nil, fmt.Errorf("parse index: tensor %q maps to invalid file name %q", tensor, file)
		}
		if !seen[file] {
			seen[file] = true
			shards = append(shards, file)
		}
	}
	slices.Sort(shards)
	return shards, nil
}
