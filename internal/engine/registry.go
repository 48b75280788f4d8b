package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/nanovox/nanovox/internal/tensor"
)

// OpenOptions tune Open and Locate.
type OpenOptions struct {
	// Matmul is the arithmetic of the big matrix products. Callers pass a
	// mode this CPU runs (tensor.Matmul.Available).
	Matmul tensor.Matmul
	// KeepBF16 keeps bfloat16 weights as bfloat16 in memory.
	KeepBF16 bool
	// Name is the display name of the model (defaults to the model argument).
	Name string
	// Codec overrides where the family finds its audio codec (a directory
	// or a hub id); empty means the family's own rule.
	Codec string
	// Resolve turns a model argument that is not a local directory (a hub
	// repo id) into a directory. Nil means only local directories work.
	Resolve func(ctx context.Context, id string) (string, error)
}

// A Part is one directory a model is loaded from.
type Part struct {
	// Role says what the directory holds ("language model", "codec").
	Role string
	Dir  string
}

// A Registration is how a model family makes itself known to Open: each
// family's package calls Register from an init function, and a program
// imports the families it serves (cmd/nanovox imports all of them).
type Registration struct {
	// ModelType is the family's config.json model_type.
	ModelType string
	// Detect reports whether dir holds a model of this family.
	Detect func(dir string) bool
	// Locate finds the directories the model in dir is made of, resolving
	// further references (a codec named by id) with o.Resolve.
	Locate func(ctx context.Context, dir string, o OpenOptions) ([]Part, error)
	// Load loads the model from the parts Locate returned.
	Load func(parts []Part, o OpenOptions) (Family, error)
}

var registry struct {
	sync.Mutex
	families []Registration
}

// Register adds a model family. It panics on an incomplete registration or
// a model type registered twice: both are programming errors.
func Register(r Registration) {
	if r.ModelType == "" || r.Detect == nil || r.Locate == nil || r.Load == nil {
		panic("engine: incomplete registration of model type " + r.ModelType)
	}
	registry.Lock()
	defer registry.Unlock()
	for _, f := range registry.families {
		if f.ModelType == r.ModelType {
			panic("engine: model type " + r.ModelType + " registered twice")
		}
	}
	registry.families = append(registry.families, r)
}

// Families returns the registered model types, sorted.
func Families() []string {
	registry.Lock()
	defer registry.Unlock()
	var out []string
	for _, f := range registry.families {
		out = append(out, f.ModelType)
	}
	slices.Sort(out)
	return out
}

// Locate resolves a model argument (a directory or a hub id) and returns
// its family and the directories it is made of, without loading it.
func Locate(ctx context.Context, model string, o OpenOptions) (Registration, []Part, error) {
	dir, err := ResolveDir(ctx, model, o)
	if err != nil {
		return Registration{}, nil, err
	}
	registry.Lock()
	families := slices.Clone(registry.families)
	registry.Unlock()
	for _, f := range families {
		if f.Detect(dir) {
			parts, err := f.Locate(ctx, dir, o)
			return f, parts, err
		}
	}
	return Registration{}, nil, unknownModel(dir)
}

// Open resolves and loads a model of any registered family.
func Open(ctx context.Context, model string, o OpenOptions) (Family, []Part, error) {
	f, parts, err := Locate(ctx, model, o)
	if err != nil {
		return nil, parts, err
	}
	if o.Name == "" {
		o.Name = model
	}
	fam, err := f.Load(parts, o)
	return fam, parts, err
}

// unknownModel explains why no family recognised dir.
func unknownModel(dir string) error {
	mt, err := readModelType(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("model %s: no config.json (is this a model directory?)", dir)
	case err != nil:
		return fmt.Errorf("model %s: %w", dir, err)
	}
	return fmt.Errorf("model %s: model_type %q is not supported (supported: %s)", dir, mt, strings.Join(Families(), ", "))
}

// ModelType reads the model_type of dir/config.json ("" if there is none or
// it cannot be read): the usual way a family's Detect recognises its models.
func ModelType(dir string) string {
	mt, _ := readModelType(dir)
	return mt
}

// readModelType reads the model_type of dir/config.json.
func readModelType(dir string) (string, error) {
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return "", err
	}
	var head struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(cfg, &head); err != nil {
		return "", fmt.Errorf("config.json: %w", err)
	}
	return head.ModelType, nil
}

// ResolveDir turns a model or codec argument into a local directory: arg
// itself if it is one, else a hub id resolved through o.Resolve.
func ResolveDir(ctx context.Context, arg string, o OpenOptions) (string, error) {
	if IsDir(arg) {
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

// IsDir reports whether p is an existing directory.
func IsDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
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
