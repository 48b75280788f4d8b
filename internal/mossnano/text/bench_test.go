package text

import (
	"strings"
	"testing"
)

func BenchmarkSplit(b *testing.B) {
	tok := loadTokenizer(b, "real/tokenizer.model")
	texts := map[string]string{
		"paragraph": strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. It was a bright cold day in April, and the clocks were striking thirteen! ", 15),
		"chinese":   strings.Repeat("欢迎关注模思智能、上海创智学院与复旦大学自然语言处理实验室。今天天气很好，我们一起去公园散步吧。", 20),
		// No punctuation at all: every chunk comes from the binary search.
		"unpunctuated": strings.Repeat("so that it must be split somewhere by the token budget rather than by punctuation ", 25),
		// One unpunctuated clause of n emoji (byte-fallback tokens): the input that made splitting quadratic.
		"emoji1024": strings.Repeat("😀", 1024),
		"emoji4096": strings.Repeat("😀", 4096),
	}
	for name, text := range texts {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := Split(tok, text, 75); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
