package spm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

type goldenEncoding struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func readGolden(t testing.TB, path string) []goldenEncoding {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g []goldenEncoding
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return g
}

func loadModel(t testing.TB, path string) *Model {
	t.Helper()
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const fixtures = "../../testdata"

// TestFixtureGoldens checks the encodings shipped with the fixtures.
func TestFixtureGoldens(t *testing.T) {
	for _, c := range []struct{ name, model, golden string }{
		{"real", "real/tokenizer.model", "real/tokenize.json"},
		{"tiny-a", "tiny-a/lm/tokenizer.model", "tiny-a/golden/tokenize.json"},
		{"tiny-b", "tiny-b/lm/tokenizer.model", "tiny-b/golden/tokenize.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := loadModel(t, filepath.Join(fixtures, c.model))
			for _, g := range readGolden(t, filepath.Join(fixtures, c.golden)) {
				if got := m.Encode(g.Text); !slices.Equal(got, g.IDs) {
					t.Errorf("Encode(%q)\n got %v\nwant %v", g.Text, got, g.IDs)
				}
			}
		})
	}
}
