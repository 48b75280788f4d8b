package weights

import "github.com/nanovox/nanovox/internal/torchbin"

func init() { loadTorch = torchbin.Load }
