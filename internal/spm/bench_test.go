package spm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTexts are about 1,000 characters each.
var benchTexts = map[string]string{
	"english": strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank, and the clocks were striking thirteen. ", 10)[:1000],
	"chinese": strings.Repeat("欢迎关注模思智能、上海创智学院与复旦大学自然语言处理实验室。今天天气很好，我们一起去公园散步吧。", 23)[:3000],
	"mixed":   strings.Repeat("Mixed 中文 and English 混合 text, 123 个。emoji 😀 <user_inst> ｆｕｌｌ ", 20),
	"run":     strings.Repeat("a", 1000),
}

func BenchmarkEncode(b *testing.B) {
	m := loadModel(b, filepath.Join(fixtures, "real/tokenizer.model"))
	for name, text := range benchTexts {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				m.Encode(text)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	m := loadModel(b, filepath.Join(fixtures, "real/tokenizer.model"))
	ids := m.Encode(benchTexts["mixed"])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Decode(ids); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(fixtures, "real/tokenizer.model"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
