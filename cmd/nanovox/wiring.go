package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nanovox/nanovox/internal/engine"
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

func loadSavedVoice(dataDir, name string) (*engine.Voice, error) {
	return nil, fmt.Errorf("--voice %q: no saved voice by that name in %s; MOSS-TTS-Nano has no preset voices: pass --ref-audio CLIP", name, dataDir)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
