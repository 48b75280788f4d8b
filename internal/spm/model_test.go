package spm

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Minimal protobuf writer for building test models.

func pbVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func pbKey(b []byte, field, wire int) []byte { return pbVarint(b, uint64(field)<<3|uint64(wire)) }

func pbBytes(b []byte, field int, v []byte) []byte {
	b = pbKey(b, field, wireBytes)
	b = pbVarint(b, uint64(len(v)))
	return append(b, v...)
}

func pbUint(b []byte, field int, v uint64) []byte {
	return pbVarint(pbKey(b, field, wireVarint), v)
}

func pbFloat(b []byte, field int, v float32) []byte {
	b = pbKey(b, field, wireFixed32)
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}

type testPiece struct {
	piece string
	score float32
	typ   int
}

func pbPiece(p testPiece) []byte {
	var b []byte
	b = pbBytes(b, 1, []byte(p.piece))
	b = pbFloat(b, 2, p.score)
	if p.typ != 0 {
		b = pbUint(b, 3, uint64(p.typ))
	}
	return b
}

// testModel describes a small model; build serializes it.
type testModel struct {
	pieces       []testPiece
	modelType    int
	byteFallback bool
	trainerExtra []byte
	normExtra    []byte // NormalizerSpec fields
	extra        []byte // ModelProto fields
}

func (tm testModel) build() []byte {
	var b []byte
	for _, p := range tm.pieces {
		b = pbBytes(b, 1, pbPiece(p))
	}
	var ts []byte
	if tm.modelType != 0 {
		ts = pbUint(ts, 3, uint64(tm.modelType))
	}
	if tm.byteFallback {
		ts = pbUint(ts, 35, 1)
	}
	ts = append(ts, tm.trainerExtra...)
	b = pbBytes(b, 2, ts)
	b = pbBytes(b, 3, append(pbBytes(nil, 1, []byte("identity")), tm.normExtra...))
	return append(b, tm.extra...)
}

// basicPieces is a toy BPE vocabulary.
func basicPieces() []testPiece {
	return []testPiece{
		{"<unk>", 0, typeUnknown}, {"<s>", 0, typeControl}, {"</s>", 0, typeControl},
		{"<x>", 0, typeUserDefined},
		{"▁", -1, typeNormal}, {"a", -2, typeNormal}, {"b", -3, typeNormal}, {"c", -4, typeNormal},
		{"ab", -5, typeNormal}, {"bc", -5, typeNormal}, {"▁a", -6, typeNormal}, {"abc", -7, typeNormal},
	}
}

func mustParse(t *testing.T, data []byte) *Model {
	t.Helper()
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBPEToyModel(t *testing.T) {
	m := mustParse(t, testModel{pieces: basicPieces(), modelType: modelBPE}.build())
	tests := []struct {
		text   string
		pieces []string
	}{
		{"", nil},
		{"   ", nil},
		{"a", []string{"▁a"}},
		{"abc", []string{"▁", "abc"}}, // ab and bc tie at -5: the leftmost (ab) merges first, then abc; ▁a never gets a chance
		{"bc", []string{"▁", "bc"}},
		{"b a", []string{"▁", "b", "▁a"}},
		{"ab<x>c", []string{"▁", "ab", "<x>", "c"}}, // <x> is frozen: no merge across it
		{"<s>", []string{"▁", "<s>"}},               // not the control piece: three unknown characters, one <unk>
		{"dd a", []string{"▁", "dd", "▁a"}},
	}
	for _, tc := range tests {
		if got := m.EncodePieces(tc.text); !slices.Equal(got, tc.pieces) {
			t.Errorf("EncodePieces(%q) = %q, want %q", tc.text, got, tc.pieces)
		}
	}
	if got, want := m.Encode("<s> a"), []int{4, 0, 10}; !slices.Equal(got, want) {
		t.Errorf("Encode(<s> a) = %v, want %v", got, want)
	}
	if got, err := m.Decode([]int{4, 0, 10, 1, 3}); err != nil || got != " ⁇  a<x>" {
		t.Errorf("Decode = %q, %v; want %q", got, err, " ⁇  a<x>")
	}
}

func TestParseErrors(t *testing.T) {
	withPieces := func(mut func([]testPiece) []testPiece) testModel {
		return testModel{pieces: mut(basicPieces()), modelType: modelBPE}
	}
	bytePieces := func(skip int) []testPiece {
		var ps []testPiece
		for i := 0; i < 256; i++ {
			if i != skip {
				ps = append(ps, testPiece{"<0x" + strings.ToUpper(string("0123456789abcdef"[i>>4])+string("0123456789abcdef"[i&15])) + ">", 0, typeByte})
			}
		}
		return ps
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", testModel{pieces: basicPieces(), modelType: modelBPE}.build()[:7], "truncated"},
		{"empty piece", withPieces(func(p []testPiece) []testPiece { return append(p, testPiece{"", 0, typeNormal}) }).build(), "empty"},
		{"duplicate", withPieces(func(p []testPiece) []testPiece { return append(p, testPiece{"ab", 0, typeNormal}) }).build(), "already defined"},
		{"no unk", withPieces(func(p []testPiece) []testPiece { return p[1:] }).build(), "no unknown piece"},
		{"two unks", withPieces(func(p []testPiece) []testPiece { return append(p, testPiece{"<unk2>", 0, typeUnknown}) }).build(), "defined twice"},
		{"byte without fallback", withPieces(func(p []testPiece) []testPiece { return append(p, testPiece{"<0x41>", 0, typeByte}) }).build(), "byte_fallback is false"},
		{"missing byte", testModel{pieces: append(basicPieces(), bytePieces(0x7f)...), modelType: modelBPE, byteFallback: true}.build(), "<0x7F>"},
		{"bad byte piece", testModel{pieces: append(append(basicPieces(), bytePieces(0x41)...), testPiece{"<0x4g>", 0, typeByte}), modelType: modelBPE, byteFallback: true}.build(), "invalid"},
		{"lower-case byte piece", testModel{pieces: append(append(basicPieces(), bytePieces(0xab)...), testPiece{"<0xab>", 0, typeByte}), modelType: modelBPE, byteFallback: true}.build(), "invalid"},
		{"word model", testModel{pieces: basicPieces(), modelType: modelWord}.build(), "WORD"},
		{"char model", testModel{pieces: basicPieces(), modelType: modelChar}.build(), "CHAR"},
		{"short charsmap", testModel{pieces: basicPieces(), modelType: modelBPE, normExtra: pbBytes(nil, 2, []byte{1, 0})}.build(), "charsmap"},
		{"charsmap size too big", testModel{pieces: basicPieces(), modelType: modelBPE, normExtra: pbBytes(nil, 2, []byte{9, 0, 0, 0, 1, 2, 3, 4, 5})}.build(), "exceeds"},
		{"empty charsmap trie", testModel{pieces: basicPieces(), modelType: modelBPE, normExtra: pbBytes(nil, 2, []byte{2, 0, 0, 0, 1, 2, 3})}.build(), "empty trie"},
		{"field zero", []byte{0x02, 0x00}, "field number"},
		{"bad wire type", []byte{0x0e}, "wire type"},
		{"stray end group", []byte{0x0c}, "end-group"},
		{"unclosed group", []byte{0x0b, 0x08, 0x01}, "truncated"},
		{"mismatched group", []byte{0x0b, 0x14}, "closed by"},
		{"overlong varint", append([]byte{0x08}, slices.Repeat([]byte{0xff}, 11)...), "varint"},
		{"bad piece message", pbBytes(nil, 1, []byte{0x0a, 0x05, 'a'}), "piece 0"},
		{"self-test failure", testModel{pieces: basicPieces(), modelType: modelBPE,
			extra: pbBytes(nil, 4, pbBytes(nil, 1, append(pbBytes(nil, 1, []byte("abc")), pbBytes(nil, 2, []byte("▁abc"))...)))}.build(), "self-test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.data)
			if err == nil {
				t.Fatalf("Parse succeeded (%d pieces), want error containing %q", m.VocabSize(), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestParseLenient checks what protobuf itself accepts: unknown fields and
// groups, known fields with other wire types, unknown enum values,
// repeated sub-messages merged.
func TestParseLenient(t *testing.T) {
	base := testModel{pieces: basicPieces(), modelType: modelBPE}
	var extra []byte
	extra = pbUint(extra, 99, 7)                                                              // unknown varint field
	extra = pbBytes(extra, 100, []byte("junk"))                                               // unknown bytes field
	extra = append(extra, 0xa3, 0x06, 0x08, 0x01, 0xa4, 0x06)                                 // group 100 { 1: 1 }
	extra = pbUint(extra, 2, 5)                                                               // trainer_spec with a varint wire type: unknown field
	extra = pbBytes(extra, 1, append(pbPiece(testPiece{"zz", -9, 0}), pbUint(nil, 3, 42)...)) // type 42: stays NORMAL
	extra = pbBytes(extra, 3, pbUint(nil, 3, 0))                                              // second normalizer_spec merges: add_dummy_prefix=false
	base.extra = extra
	m := mustParse(t, base.build())
	if got, want := m.VocabSize(), len(basicPieces())+1; got != want {
		t.Fatalf("VocabSize = %d, want %d", got, want)
	}
	if id, ok := m.PieceToID("zz"); !ok || m.pieces[id].typ != typeNormal {
		t.Errorf("piece with unknown type value: id %d ok %v", id, ok)
	}
	if got := m.EncodePieces("ab"); !slices.Equal(got, []string{"ab"}) {
		t.Errorf("merged normalizer spec not applied: EncodePieces(ab) = %q", got)
	}
	if m.kind != modelBPE {
		t.Errorf("model type %d, want BPE", m.kind)
	}
}

func TestPieceLookups(t *testing.T) {
	m := loadModel(t, filepath.Join(fixtures, "real/tokenizer.model"))
	if got := m.VocabSize(); got != 16384 {
		t.Errorf("VocabSize = %d, want 16384", got)
	}
	tests := []struct {
		piece string
		id    int
		ok    bool
	}{
		{"<unk>", 0, true}, {"<s>", 1, true}, {"</s>", 2, true}, {"<pad>", 3, true},
		{"<|im_start|>", 4, true}, {"<user_inst>", 13, true}, {"</user_inst>", 14, true},
		{"<0x00>", 15, true}, {"<0xFF>", 270, true}, {"▁the", 280, true},
		{"no such piece", 0, false}, {"", 0, false},
	}
	for _, tc := range tests {
		id, ok := m.PieceToID(tc.piece)
		if id != tc.id || ok != tc.ok {
			t.Errorf("PieceToID(%q) = %d, %v; want %d, %v", tc.piece, id, ok, tc.id, tc.ok)
		}
		if tc.ok && m.IDToPiece(tc.id) != tc.piece {
			t.Errorf("IDToPiece(%d) = %q, want %q", tc.id, m.IDToPiece(tc.id), tc.piece)
		}
	}
	for _, id := range []int{-1, 16384, math.MaxInt} {
		if p := m.IDToPiece(id); p != "" {
			t.Errorf("IDToPiece(%d) = %q, want empty", id, p)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	m := loadModel(t, filepath.Join(fixtures, "tiny-a/lm/tokenizer.model"))
	for _, ids := range [][]int{{-1}, {m.VocabSize()}, {5, 1 << 40}} {
		if s, err := m.Decode(ids); err == nil {
			t.Errorf("Decode(%v) = %q, want error", ids, s)
		}
	}
	if s, err := m.Decode(nil); err != nil || s != "" {
		t.Errorf("Decode(nil) = %q, %v", s, err)
	}
}

func TestNormalize(t *testing.T) {
	m := loadModel(t, filepath.Join(fixtures, "real/tokenizer.model"))
	tests := []struct{ in, want string }{
		{"", ""},
		{" \t\n ", ""},
		{"Hello  world", "▁Hello▁world"},
		{"ｆｕｌｌ　ｗｉｄｔｈ", "▁full▁width"},
		{"\x01x\x7f", "▁x"},
		{"a\xffb", "▁a\uFFFDb"},
		{"\uFFFD", ""}, // nmt_nfkc deletes a literal U+FFFD; only invalid bytes become one
		{"<user_inst>ｆ", "▁<user_inst>f"},
		{"ﬁ", "▁fi"},
	}
	for _, tc := range tests {
		if got := m.Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.model")); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
	path := filepath.Join(t.TempDir(), "garbage.model")
	if err := os.WriteFile(path, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load(garbage) error = %v, want one naming the file", err)
	}
}

// TestConcurrentEncode runs Encode and Decode from several goroutines (run
// with -race): a Model is read-only after Parse.
func TestConcurrentEncode(t *testing.T) {
	m := loadModel(t, filepath.Join(fixtures, "real/tokenizer.model"))
	texts := []string{"Hello world.", "你好，世界。", "<user_inst>x</user_inst>", "emoji 😀 \xff"}
	want := make([][]int, len(texts))
	for i, s := range texts {
		want[i] = m.Encode(s)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				k := (i + g) % len(texts)
				ids := m.Encode(texts[k])
				if !slices.Equal(ids, want[k]) {
					done <- fmt.Errorf("Encode(%q) = %v, want %v", texts[k], ids, want[k])
					return
				}
				if _, err := m.Decode(ids); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func selfTestSample(input, expected string) []byte {
	sample := append(pbBytes(nil, 1, []byte(input)), pbBytes(nil, 2, []byte(expected))...)
	return pbBytes(nil, 4, pbBytes(nil, 1, sample))
}

func TestSelfTest(t *testing.T) {
	uni := []testPiece{{"<unk>", 0, typeUnknown}, {"▁a", -1, typeNormal}, {"b", -1, typeNormal}, {"▁ab", -2, typeNormal}}
	tests := []struct {
		name string
		tm   testModel
		ok   bool
	}{
		{"bpe exact", testModel{pieces: basicPieces(), modelType: modelBPE, extra: selfTestSample("abc", "▁ abc")}, true},
		{"bpe different", testModel{pieces: basicPieces(), modelType: modelBPE, extra: selfTestSample("abc", "▁a bc")}, false},
		{"unigram exact", testModel{pieces: uni, modelType: modelUnigram, extra: selfTestSample("ab", "▁ab")}, true},
		{"unigram same score", testModel{pieces: uni, modelType: modelUnigram, extra: selfTestSample("ab", "▁a b")}, true},
		{"unigram lower score", testModel{pieces: uni, modelType: modelUnigram, extra: selfTestSample("ab", "b")}, false},
	}
	for _, tc := range tests {
		_, err := Parse(tc.tm.build())
		if (err == nil) != tc.ok {
			t.Errorf("%s: Parse error = %v, want ok = %v", tc.name, err, tc.ok)
		}
	}
}
