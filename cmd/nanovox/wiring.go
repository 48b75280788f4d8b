package main

import (
	"os"
	"path/filepath"
)

// defaultDataDir is where saved voices live: $NANOVOX_DATA_DIR, else
// $XDG_DATA_HOME/nanovox, else ~/.local/share/nanovox.
func defaultDataDir() string {
	if d := os.Getenv("NANOVOX_DATA_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "nanovox")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "nanovox")
	}
	return "nanovox-data"
}
