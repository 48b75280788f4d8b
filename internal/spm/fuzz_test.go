package spm

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	fuzzModelsOnce sync.Once
	fuzzModels     []*Model
)

// modelsForFuzz loads the real model and the extra test models.
func modelsForFuzz(f *testing.F) []*Model {
	fuzzModelsOnce.Do(func() {
		paths := []string{filepath.Join(fixtures, "real/tokenizer.model")}
		for _, name := range []string{"bpe_unk", "bpe_raw", "bpe_suffix", "unigram", "unigram_fb"} {
			paths = append(paths, filepath.Join("testdata", name+".model"))
		}
		for _, p := range paths {
			m, err := Load(p)
			if err != nil {
				panic(err)
			}
			fuzzModels = append(fuzzModels, m)
		}
	})
	return fuzzModels
}

// FuzzEncode checks that Encode never panics, returns only valid ids that
// are never control pieces, and for the real model (nmt_nfkc, dummy prefix,
// byte fallback) that Decode(Encode(x)) is the normalized text with
// U+2581 turned back into spaces and the dummy prefix dropped. That round
// trip is what SentencePiece guarantees only when the input has no literal
// U+2581 (a literal one is indistinguishable from a space).
func FuzzEncode(f *testing.F) {
	models := modelsForFuzz(f)
	for _, s := range []string{
		"", " ", "Hello world.", "  a  b  ", "\n\r\t", "<user_inst>x</user_inst>", "<|im_start|",
		"<unk><s></s>", "\xff\xfe", "a\xc3", "\xed\xa0\x80", "\U0001F600\u200d\U0001F469", "e\u0301",
		"ｆｕｌｌ", "\u2581", "\x00", strings.Repeat("ab", 100), "你好，世界。", "\uFFFD", "<u>x<|a|>",
	} {
		for i := range models {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		m := models[int(which)%len(models)]
		ids := m.Encode(text)
		for _, id := range ids {
			if id < 0 || id >= m.VocabSize() {
				t.Fatalf("Encode(%q) produced id %d outside the vocabulary", text, id)
			}
			if m.pieces[id].typ == typeControl {
				t.Fatalf("Encode(%q) produced control piece %q", text, m.pieces[id].piece)
			}
		}
		if p := m.EncodePieces(text); len(p) != len(ids) {
			t.Fatalf("EncodePieces(%q) has %d pieces, Encode %d ids", text, len(p), len(ids))
		}
		got, err := m.Decode(ids)
		if err != nil {
			t.Fatalf("Decode(Encode(%q)): %v", text, err)
		}
		if which%uint8(len(models)) != 0 || strings.Contains(text, spaceSymbol) {
			return
		}
		want := strings.ReplaceAll(strings.TrimPrefix(m.Normalize(text), spaceSymbol), spaceSymbol, " ")
		if got != want {
			t.Fatalf("Decode(Encode(%q)) = %q, want %q", text, got, want)
		}
	})
}

// FuzzParse feeds Parse arbitrary bytes (seeded with real models and broken
// copies of them): it must never panic, and a model it accepts must encode
// and decode without panicking.
func FuzzParse(f *testing.F) {
	for _, p := range []string{
		filepath.Join("testdata", "bpe_unk.model"),
		filepath.Join("testdata", "bpe_suffix.model"),
		filepath.Join("testdata", "unigram.model"),
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		flipped := append([]byte(nil), data...)
		for i := 7; i < len(flipped); i += 97 {
			flipped[i] ^= 0x5a
		}
		f.Add(flipped)
	}
	f.Add(testModel{pieces: basicPieces(), modelType: modelBPE}.build())
	f.Add(testModel{pieces: basicPieces(), modelType: modelUnigram}.build())
	f.Add(testModel{pieces: basicPieces(), modelType: modelBPE, normExtra: pbBytes(nil, 2, []byte{4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'x', 0})}.build())
	f.Add([]byte{})
	f.Add([]byte{0x0b, 0x0b, 0x0b})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		for _, s := range []string{"", "Hello world", " a  b ", "\xff<x>", "你好", "abcabc"} {
			ids := m.Encode(s)
			for _, id := range ids {
				if id < 0 || id >= m.VocabSize() {
					t.Fatalf("id %d outside the vocabulary", id)
				}
			}
			if _, err := m.Decode(ids); err != nil {
				t.Fatal(err)
			}
		}
		all := make([]int, m.VocabSize())
		for i := range all {
			all[i] = i
		}
		if _, err := m.Decode(all); err != nil {
			t.Fatal(err)
		}
	})
}
