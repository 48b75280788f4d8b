package text

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/nanovox/nanovox/internal/spm"
)

// TestDifferential runs the cases (see testdata/README.md) computed with the
// upstream OpenMOSS functions and the real SentencePiece.
func TestDifferential(t *testing.T) {
	f, err := os.Open("testdata/chunks_differential.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Tokenizer string    `json:"tokenizer"`
			Text      string    `json:"text"`
			MaxTokens int       `json:"max_tokens"`
			Chunks    []string  `json:"chunks"`
			Pauses    []float64 `json:"pauses"`
			Error     bool      `json:"error"`
		} `json:"cases"`
	}
	if err := json.NewDecoder(z).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 1000 {
		t.Fatalf("only %d cases", len(g.Cases))
	}
	toks := map[string]*spm.Model{
		"real":   loadTokenizer(t, "real/tokenizer.model"),
		"tiny-a": loadTokenizer(t, "tiny-a/lm/tokenizer.model"),
	}
	failures := 0
	for _, c := range g.Cases {
		tok := toks[c.Tokenizer]
		if tok == nil {
			t.Fatalf("unknown tokenizer %q", c.Tokenizer)
		}
		got, err := Split(tok, c.Text, c.MaxTokens)
		if c.Error {
			if !errors.Is(err, ErrEmpty) {
				t.Errorf("Split(%q, %d) error %v, want ErrEmpty", c.Text, c.MaxTokens, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Split(%q, %d): %v", c.Text, c.MaxTokens, err)
			continue
		}
		var texts []string
		for _, ch := range got {
			texts = append(texts, ch.Text)
		}
		if !equalChunks(got, c.Chunks, c.Pauses) {
			failures++
			t.Errorf("Split(%q, %d) with %s\n got %q\nwant %q (pauses %v)", c.Text, c.MaxTokens, c.Tokenizer, texts, c.Chunks, c.Pauses)
			if failures > 10 {
				t.FailNow()
			}
		}
	}
}

func equalChunks(got []Chunk, texts []string, pauses []float64) bool {
	if len(got) != len(texts) || len(pauses) != len(texts)-1 {
		return false
	}
	for i, c := range got {
		want := 0.0
		if i < len(pauses) {
			want = pauses[i]
		}
		if c.Text != texts[i] || c.PauseAfter != want {
			return false
		}
	}
	return true
}
