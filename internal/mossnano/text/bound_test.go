package text

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nanovox/nanovox/internal/spm"
)

// countingTokenizer counts the characters it encodes: the splitter's work.
// Embedding the model keeps its vocabulary methods, which the bound uses.
type countingTokenizer struct {
	*spm.Model
	calls, runes int
}

func (c *countingTokenizer) Encode(s string) []int {
	c.calls++
	c.runes += utf8.RuneCountInString(s)
	return c.Model.Encode(s)
}

// refSplit is Split with the reference splitter.
func refSplit(tok Tokenizer, text string, maxTokens int) []string {
	s := refSplitter{tok: tok, max: maxTokens}
	parts := s.split(text)
	if len(parts) <= 1 {
		parts = []string{text}
	}
	return parts
}

// TestSplitWorkLinear checks that the characters encoded grow linearly
// with an unpunctuated input: 4× the input may cost at most 5× the work.
// Before the bound, 1,024 emoji encoded 66,528 characters and 4,096 emoji
// 965,213 (14.5×).
func TestSplitWorkLinear(t *testing.T) {
	tok := loadTokenizer(t, "real/tokenizer.model")
	inputs := map[string]func(n int) string{
		"emoji":        func(n int) string { return strings.Repeat("😀", n) },
		"words":        func(n int) string { return strings.Repeat("lorem ipsum ", n/12) },
		"letters":      func(n int) string { return strings.Repeat("abcdefghij", n/10) },
		"chinese":      func(n int) string { return strings.Repeat("我们一起去公园散步吧", n/10) },
		"mixed spaces": func(n int) string { return strings.Repeat("a\t\u3000b ", n/5) },
		"fullwidth":    func(n int) string { return strings.Repeat("Ａｂ１ ﬁ½ ", n/8) },
	}
	for name, gen := range inputs {
		t.Run(name, func(t *testing.T) {
			work := func(n int) int {
				c := &countingTokenizer{Model: tok}
				text := gen(n)
				got, err := Split(c, text, 75)
				if err != nil {
					t.Fatal(err)
				}
				if n == 1024 {
					// The bound must not change the chunks.
					if want := refSplit(tok, text, 75); !slices.Equal(chunkTexts(got), want) {
						t.Fatalf("chunks differ from the reference")
					}
				}
				return c.runes
			}
			small, large := work(1024), work(4096)
			t.Logf("%d characters encoded for 1,024 input characters, %d for 4,096", small, large)
			if large > 5*small {
				t.Errorf("work grew %.1f× for 4× the input (%d → %d characters encoded)", float64(large)/float64(small), small, large)
			}
		})
	}
}

func chunkTexts(cs []Chunk) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Text)
	}
	return out
}

// TestSplitEquivalence compares Split with the reference splitter on
// random texts made to hit budget splits: long runs without punctuation,
// mixed scripts, emoji, combining marks, odd spaces and characters the
// normalizer changes.
func TestSplitEquivalence(t *testing.T) {
	toks := []struct {
		name string
		tok  *spm.Model
	}{
		{"real", loadTokenizer(t, "real/tokenizer.model")},
		{"tiny-a", loadTokenizer(t, "tiny-a/lm/tokenizer.model")},
	}
	atoms := []string{
		"the", "quick", "brown", "fox", "nanovox", "Supercalifragilistic", "a", "I",
		" ", " ", " ", "  ", "\t", "\u3000", "\u00a0", "\n",
		",", ".", "!", "?", ";", ":", "，", "。", "、", "！", "）", "\"", "'", "”",
		"我们", "公园", "散步", "天气", "こんにちは", "カタカナ", "한국어",
		"😀", "👍🏽", "🇫🇷", "\u200b", "\u200d", "e\u0301", "\u1100\u1161\u11a8", "ﾊﾟ",
		"Ａ", "１２３", "ﬁ", "½", "Ⅻ", "ǅ", "ß", "123", "4.5", "\x01", "\ufffd", "\U0010fffd", "\x1c", "\x1f", "\u0085", "\u2028", "\u2029", "\v", "\f",
	}
	rng := rand.New(rand.NewPCG(21, 3))
	n := 300
	if os.Getenv("NANOVOX_LONG_TESTS") != "" {
		n = 5000
	}
	for i := range n {
		var b strings.Builder
		words := 1 + rng.IntN(120)
		if i%100 == 0 {
			words = 300 + rng.IntN(300)
		}
		// Texts that mostly lack punctuation reach the budget splitter.
		punct := rng.IntN(3) == 0
		for range words {
			a := atoms[rng.IntN(len(atoms))]
			if !punct && strings.ContainsAny(a, ",.!?;:，。、！") {
				a = "x"
			}
			b.WriteString(a)
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		text := b.String()
		budget := 1 + rng.IntN(100)
		tk := toks[i%len(toks)]
		got, err := Split(tk.tok, text, budget)
		if errors.Is(err, ErrEmpty) && len(strip([]rune(text))) == 0 {
			continue
		}
		if err != nil {
			t.Fatalf("Split(%q, %d) with %s: %v", text, budget, tk.name, err)
		}
		if want := refSplit(tk.tok, text, budget); !slices.Equal(chunkTexts(got), want) {
			t.Fatalf("Split(%q, %d) with %s\n got %q\nwant %q", text, budget, tk.name, chunkTexts(got), want)
		}
	}
}

// TestBoundSound checks the bound against the real count on every prefix
// of random texts: it must never exceed it.
func TestBoundSound(t *testing.T) {
	tok := loadTokenizer(t, "real/tokenizer.model")
	b := newBounder(tok)
	if b == nil {
		t.Fatal("no bound for the real tokenizer (byte fallback not detected)")
	}
	texts := []string{
		strings.Repeat("😀", 40),
		"Supercalifragilisticexpialidocious antidisestablishmentarianism",
		"我们一起去公园散步吧今天天气很好",
		"e\u0301e\u0301 Ａ１ ﬁ½ ﾊﾟ \u1100\u1161\u11a8 \u200b\u200d a\tb\u3000c",
		"word\x1cjoined\x1fby\u0085controls\u2028and\u00a0others",
		"ＡＢＣ ｄｅｆ ﬁﬂ ½⅓ ㈱ ﾃｽﾄ Ⅻ ｶﾞ ℡ ⑩",
		// Controls the normalizer deletes join words: "▁the", "▁quick".
		"t\x1ch\x1ce q\vu\x1fi\x1cc\x1ck",
		"\U0010fffd\U0010fffd x 👍🏽🇫🇷",
	}
	for _, text := range texts {
		rs := []rune(text)
		b.reset(rs)
		for i := 0; i < len(rs); i++ {
			for j := i + 1; j <= len(rs); j++ {
				n := len(tok.Encode(string(rs[i:j])))
				if b.over(i, j, n) {
					t.Fatalf("bound of %q is %.3f, more than its %d tokens", string(rs[i:j]), b.prefix[j]-b.prefix[i], n)
				}
			}
		}
	}
}

// TestSplitCanceled checks that a done context stops splitting of a
// pathological input with the context's error.
func TestSplitCanceled(t *testing.T) {
	tok := loadTokenizer(t, "real/tokenizer.model")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &countingTokenizer{Model: tok}
	_, err := SplitContext(ctx, c, strings.Repeat("😀", 4096), 75)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("SplitContext with a canceled context: %v, want context.Canceled", err)
	}
	// Only the whole sentence and clause (once each) may have been encoded.
	if c.calls > 2 {
		t.Errorf("%d encodes after cancellation, want at most 2", c.calls)
	}
}
