// Package testmodel writes MOSS-TTS-Nano checkpoints (language model and
// codec) in the exact published on-disk formats, with seeded random weights:
// tiny ones for unit tests and full-size ones (the shapes of the release) for
// benchmarks. Nothing here is used at inference time.
package testmodel

// Layout selects the published checkpoint layout to imitate.
type Layout string

// The two published layouts.
const (
	// OpenMOSS is the layout of the OpenMOSS-Team repositories: the LM with
	// its tied head copies and dead local wte, the codec sharded with an
	// index and legacy key spellings.
	OpenMOSS Layout = "openmoss"
	// MLX is the mlx-community conversion: no tied copies, module key names.
	MLX Layout = "mlx"
)

// DType is the storage dtype of the written weights.
type DType string

// Storage dtypes.
const (
	Float32  DType = "float32"
	BFloat16 DType = "bfloat16"
	Float16  DType = "float16"
)

// Preset selects the model size.
type Preset string

// Presets.
const (
	// Tiny has the real structure at toy sizes (hidden 64, 8 codebooks of 128).
	Tiny Preset = "tiny"
	// Nano100M has the shapes of the released OpenMOSS-Team/MOSS-TTS-Nano-100M
	// and MOSS-Audio-Tokenizer-Nano, and writes their exact config.json files.
	Nano100M Preset = "nano-100m"
)
