package main

// The model families nanovox serves. Each registers itself with the engine
// (engine.Register) when imported; a new family is one more line here.
import (
	_ "github.com/nanovox/nanovox/internal/mossnano"
)
