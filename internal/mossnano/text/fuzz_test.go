package text

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/nanovox/nanovox/internal/spm"
)

var (
	realTokOnce sync.Once
	realTok     *spm.Model
)

// nonSpace returns the non-whitespace characters of s in order.
func nonSpace(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !isSpace(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FuzzSplit checks what Split guarantees for any input:
//   - invalid UTF-8 gives ErrInvalidUTF8, blank text ErrEmpty, anything
//     else at least one chunk;
//   - a single chunk is the input unchanged;
//   - several chunks are non-empty and stripped, and together hold the
//     prepared text's non-space characters in order (splitting and
//     merging only ever drop or add whitespace);
//   - TokenIDs is the encoding of Text and pauses follow the word rule;
//   - with a tokenizer whose counts are monotone and additive (one token
//     per UTF-8 byte of non-space characters), every chunk of several is
//     within the budget unless it is one character costing more than the
//     budget. With BPE no bound holds strictly: merges across a join or a
//     cut can change counts (see Split).
func FuzzSplit(f *testing.F) {
	realTokOnce.Do(func() {
		m, err := spm.Load(fixtures + "/real/tokenizer.model")
		if err != nil {
			panic(err)
		}
		realTok = m
	})
	for _, s := range []string{
		"", " ", "hi", "Hello world. This is a test!", "你好，世界。今天天气很好。", "\xff",
		"ǅ ß ﬁ", "a\x1cb", "“Quoted.” (Paren!) 'single?'", strings.Repeat("word ", 60),
		strings.Repeat("x", 200), "😀😀😀", "...!!!???", "a,b,c,d,e,f,g", "\u3000\u00a0x",
		"Mixed 中文 and English text. 这是第二句！And a third one? 第四句；还有第五句：结束",
	} {
		for _, budget := range []int{0, 1, 3, 20, 75} {
			f.Add(s, budget, false)
			f.Add(s, budget, true)
		}
	}
	f.Fuzz(func(t *testing.T, text string, budget int, real bool) {
		if len(text) > 2000 {
			return // Split is quadratic-ish in unpunctuated length; keep fuzzing fast
		}
		budget %= 120
		var tok Tokenizer = byteTokenizer{}
		if real {
			tok = realTok
		}
		chunks, err := Split(tok, text, budget)
		switch {
		case !utf8.ValidString(text):
			if !errors.Is(err, ErrInvalidUTF8) {
				t.Fatalf("invalid UTF-8: err = %v", err)
			}
			return
		case len(strip([]rune(text))) == 0:
			if !errors.Is(err, ErrEmpty) {
				t.Fatalf("blank text: err = %v", err)
			}
			return
		case err != nil:
			t.Fatal(err)
		case len(chunks) == 0:
			t.Fatal("no chunks")
		}
		for i, c := range chunks {
			if !slices.Equal(c.TokenIDs, tok.Encode(c.Text)) {
				t.Fatalf("chunk %d: TokenIDs are not Encode(Text)", i)
			}
			want := 0.0
			if i < len(chunks)-1 {
				want = PauseLong
				if countWords([]rune(c.Text)) <= 4 {
					want = PauseShort
				}
			}
			if c.PauseAfter != want {
				t.Fatalf("chunk %d %q: pause %v, want %v", i, c.Text, c.PauseAfter, want)
			}
		}
		if len(chunks) == 1 {
			if chunks[0].Text != text {
				t.Fatalf("single chunk %q is not the input %q", chunks[0].Text, text)
			}
			return
		}
		if budget <= 0 {
			t.Fatalf("budget %d split the text into %d chunks", budget, len(chunks))
		}
		var all strings.Builder
		for i, c := range chunks {
			rs := []rune(c.Text)
			if len(rs) == 0 || len(strip(rs)) != len(rs) {
				t.Fatalf("chunk %d %q is empty or not stripped", i, c.Text)
			}
			all.WriteString(c.Text)
			if !real && len(c.TokenIDs) > budget && len(rs) != 1 {
				t.Fatalf("chunk %d %q has %d tokens, budget %d", i, c.Text, len(c.TokenIDs), budget)
			}
		}
		if got, want := nonSpace(all.String()), nonSpace(string(prepare(text))); got != want {
			t.Fatalf("chunks hold %q, prepared text %q", got, want)
		}
	})
}
