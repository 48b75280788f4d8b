package textnorm

import (
	"sync"

	"github.com/nanovox/nanovox/internal/textnorm/en"
	"github.com/nanovox/nanovox/internal/textnorm/zh"
)

// OpenMOSS returns the pipeline OpenMOSS's CLI and servers run by default:
// every stage, with the Chinese WeText grammar as
// Normalizer(remove_interjections=False, remove_erhua=False,
// full_to_half=False) configures it and the English one with its defaults.
// It is built once, on first use, and is safe for concurrent use.
var OpenMOSS = sync.OnceValue(func() *Pipeline {
	return &Pipeline{ZH: zh.New(), EN: en.New()}
})
