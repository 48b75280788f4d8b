package weights

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nanovox/nanovox/internal/tensor"
)

// Store is the set of tensors of one checkpoint directory.
type Store struct {
	Dir     string
	files   []string
	tensors map[string]*Tensor
	open    []*SafetensorsFile
	used    map[string]bool
}

// Files returns the weight files the store was read from (relative to Dir).
func (s *Store) Files() []string { return s.files }

// Names returns all tensor names, sorted.
func (s *Store) Names() []string {
	out := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Tensor returns the named tensor or nil.
func (s *Store) Tensor(name string) *Tensor { return s.tensors[name] }

// Has reports whether the store holds name.
func (s *Store) Has(name string) bool { _, ok := s.tensors[name]; return ok }

// Close releases memory-mapped files. Tensors obtained from the store must
// have been converted (Vec, Mat) before; raw Data is invalid afterwards.
func (s *Store) Close() error {
	var errs []error
	for _, f := range s.open {
		errs = append(errs, f.Close())
	}
	s.open = nil
	return errors.Join(errs...)
}

// Unused returns the names of tensors that were never fetched, sorted.
func (s *Store) Unused() []string {
	var out []string
	for n := range s.tensors {
		if !s.used[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Open finds the weight files in dir and indexes their tensors. Preference:
// model.safetensors.index.json (with every shard it lists), model.safetensors,
// any *.safetensors, pytorch_model.bin.index.json, pytorch_model.bin.
func Open(dir string) (*Store, error) {
	s := &Store{Dir: dir, tensors: map[string]*Tensor{}, used: map[string]bool{}}
	files, kind, err := findFiles(dir)
	if err != nil {
		return nil, err
	}
	s.files = files
	for _, f := range files {
		path := filepath.Join(dir, f)
		var ts []*Tensor
		switch kind {
		case "safetensors":
			sf, err := OpenSafetensors(path)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("weights: %w", err)
			}
			s.open = append(s.open, sf)
			for _, n := range sf.Names() {
				ts = append(ts, sf.Tensor(n))
			}
		case "torch":
			loaded, err := LoadTorch(path)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("weights: %w", err)
			}
			for i := range loaded {
				ts = append(ts, &loaded[i])
			}
		}
		for _, t := range ts {
			if _, dup := s.tensors[t.Name]; dup {
				s.Close()
				return nil, fmt.Errorf("weights: tensor %q appears in more than one file of %s", t.Name, dir)
			}
			s.tensors[t.Name] = t
		}
	}
	return s, nil
}

func findFiles(dir string) ([]string, string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, "", fmt.Errorf("weights: %w", err)
	}
	if !st.IsDir() {
		return nil, "", fmt.Errorf("weights: %s is not a directory", dir)
	}
	exists := func(n string) bool {
		fi, err := os.Stat(filepath.Join(dir, n))
		return err == nil && !fi.IsDir()
	}
	if exists("model.safetensors.index.json") {
		shards, err := indexShards(filepath.Join(dir, "model.safetensors.index.json"))
		if err != nil {
			return nil, "", err
		}
		for _, sh := range shards {
			if !exists(sh) {
				return nil, "", fmt.Errorf("weights: %s lists shard %q, which is missing", filepath.Join(dir, "model.safetensors.index.json"), sh)
			}
		}
		return shards, "safetensors", nil
	}
	if exists("model.safetensors") {
		return []string{"model.safetensors"}, "safetensors", nil
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if len(matches) > 0 {
		var names []string
		for _, m := range matches {
			names = append(names, filepath.Base(m))
		}
		sort.Strings(names)
		return names, "safetensors", nil
	}
	if exists("pytorch_model.bin.index.json") {
		shards, err := indexShards(filepath.Join(dir, "pytorch_model.bin.index.json"))
		if err != nil {
			return nil, "", err
		}
		for _, sh := range shards {
			if !exists(sh) {
				return nil, "", fmt.Errorf("weights: %s lists shard %q, which is missing", filepath.Join(dir, "pytorch_model.bin.index.json"), sh)
			}
		}
		return shards, "torch", nil
	}
	if exists("pytorch_model.bin") {
		return []string{"pytorch_model.bin"}, "torch", nil
	}
	return nil, "", fmt.Errorf("weights: no weights in %s (looked for model.safetensors, model.safetensors.index.json, *.safetensors, pytorch_model.bin)", dir)
}

// indexShards reads a Hugging Face index file and returns its distinct shard
// file names, sorted.
func indexShards(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("weights: %s has an empty weight_map", path)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range idx.WeightMap {
		if f == "" || strings.ContainsAny(f, `/\`) || f == "." || f == ".." {
			return nil, fmt.Errorf("weights: %s names an invalid shard %q", path, f)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ShapeError reports a tensor whose shape disagrees with the config.
type ShapeError struct {
	Name       string
	Want, Have []int
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("tensor %q has shape %v, config implies %v", e.Name, e.Have, e.Want)
}

// MissingError reports a tensor the config requires but the checkpoint lacks.
type MissingError struct {
	Names []string // the spellings that were tried
}

func (e *MissingError) Error() string {
	if len(e.Names) == 1 {
		return fmt.Sprintf("missing tensor %q", e.Names[0])
	}
	return fmt.Sprintf("missing tensor %q (also tried %q)", e.Names[0], e.Names[1:])
}

// Lookup returns the first of the given spellings present in the store.
func (s *Store) Lookup(names ...string) (*Tensor, error) {
	for _, n := range names {
		if t, ok := s.tensors[n]; ok {
			s.used[n] = true
			return t, nil
		}
	}
	return nil, &MissingError{Names: names}
}

func checkShape(t *Tensor, shape []int) error {
	if len(t.Shape) != len(shape) {
		return &ShapeError{Name: t.Name, Want: shape, Have: t.Shape}
	}
	for i := range shape {
		if t.Shape[i] != shape[i] {
			return &ShapeError{Name: t.Name, Want: shape, Have: t.Shape}
		}
	}
	if !t.DType.isFloat() {
		return fmt.Errorf("tensor %q has dtype %s; want F32, F16 or BF16", t.Name, t.DType)
	}
	return nil
}

// F32 returns the tensor (first present spelling of names) as float32,
// checking its shape.
func (s *Store) F32(shape []int, names ...string) ([]float32, error) {
	t, err := s.Lookup(names...)
	if err != nil {
		return nil, err
	}
	if err := checkShape(t, shape); err != nil {
		return nil, err
	}
	return t.Float32()
}

// Mat returns a [rows, cols] matrix (first present spelling of names). BF16
// tensors stay bfloat16 when keepBF16 is set; everything else becomes float32.
// Extra trailing dimensions of size 1 (a kernel-1 convolution) are accepted.
func (s *Store) Mat(rows, cols int, keepBF16 bool, names ...string) (*tensor.Mat, error) {
	t, err := s.Lookup(names...)
	if err != nil {
		return nil, err
	}
	shape := []int{rows, cols}
	if len(t.Shape) == 3 && t.Shape[2] == 1 {
		shape = append(shape, 1)
	}
	if err := checkShape(t, shape); err != nil {
		return nil, err
	}
	if keepBF16 && t.DType == BF16 {
		b, err := t.BFloat16()
		if err != nil {
			return nil, err
		}
		return tensor.NewBF16(rows, cols, b), nil
	}
	f, err := t.Float32()
	if err != nil {
		return nil, err
	}
	return tensor.NewF32(rows, cols, f), nil
}
