package text

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanovox/nanovox/internal/spm"
)

const fixtures = "../../../testdata"

func loadTokenizer(t testing.TB, path string) *spm.Model {
	t.Helper()
	m, err := spm.Load(filepath.Join(fixtures, path))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkChunks compares Split's result with expected texts, ids and pauses.
func checkChunks(t *testing.T, got []Chunk, texts []string, ids [][]int, pauses []float64) {
	t.Helper()
	if len(got) != len(texts) {
		var g []string
		for _, c := range got {
			g = append(g, c.Text)
		}
		t.Fatalf("%d chunks %q, want %d %q", len(got), g, len(texts), texts)
	}
	for i, c := range got {
		if c.Text != texts[i] {
			t.Errorf("chunk %d text %q, want %q", i, c.Text, texts[i])
		}
		if ids != nil && !slices.Equal(c.TokenIDs, ids[i]) {
			t.Errorf("chunk %d ids %v, want %v", i, c.TokenIDs, ids[i])
		}
		want := 0.0
		if pauses != nil && i < len(pauses) {
			want = pauses[i]
		}
		if pauses != nil && c.PauseAfter != want {
			t.Errorf("chunk %d pause %v, want %v", i, c.PauseAfter, want)
		}
	}
}

// TestRealChunks checks testdata/real/chunks.json (real tokenizer, budgets
// 75, 50 and 20).
func TestRealChunks(t *testing.T) {
	tok := loadTokenizer(t, "real/tokenizer.model")
	var cases []struct {
		Text      string    `json:"text"`
		MaxTokens int       `json:"max_text_tokens"`
		Chunks    []string  `json:"chunks"`
		IDs       [][]int   `json:"chunk_token_ids"`
		Pauses    []float64 `json:"pause_after_seconds"`
	}
	readJSON(t, filepath.Join(fixtures, "real/chunks.json"), &cases)
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		got, err := Split(tok, c.Text, c.MaxTokens)
		if err != nil {
			t.Errorf("Split(%q, %d): %v", c.Text, c.MaxTokens, err)
			continue
		}
		if len(c.Pauses) != len(c.Chunks)-1 {
			t.Fatalf("golden has %d pauses for %d chunks", len(c.Pauses), len(c.Chunks))
		}
		checkChunks(t, got, c.Chunks, c.IDs, c.Pauses)
	}
}

// TestTinyChunks checks the text chunks of the tiny fixtures' generation
// goldens (budget 75 for canonical, 20 for long).
func TestTinyChunks(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		tok := loadTokenizer(t, fixture+"/lm/tokenizer.model")
		for file, budget := range map[string]int{"canonical.json": 75, "long.json": 20} {
			t.Run(fixture+"/"+file, func(t *testing.T) {
				var g struct {
					Text   string   `json:"text"`
					Chunks []string `json:"text_chunks"`
					IDs    [][]int  `json:"text_token_ids"`
				}
				readJSON(t, filepath.Join(fixtures, fixture, "golden", file), &g)
				got, err := Split(tok, g.Text, budget)
				if err != nil {
					t.Fatal(err)
				}
				checkChunks(t, got, g.Chunks, g.IDs, nil)
			})
		}
	}
}
