package spm

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// The differential goldens are written by testdata/gen_golden.py with the
// real SentencePiece (0.1.97); see that script for what they contain.

type diffEncode struct {
	Text   string   `json:"text"`
	Bytes  string   `json:"bytes"` // base64, for invalid UTF-8 input
	IDs    []int    `json:"ids"`
	Pieces []string `json:"pieces"`
}

type diffDecode struct {
	IDs  []int  `json:"ids"`
	Text string `json:"text"`
}

type diffModel struct {
	Path   string       `json:"path"`
	Encode []diffEncode `json:"encode"`
	Decode []diffDecode `json:"decode"`
}

type diffGolden struct {
	Version string               `json:"sentencepiece_version"`
	Models  map[string]diffModel `json:"models"`
	Digests struct {
		Model              string `json:"model"`
		ScalarsSHA256      string `json:"scalars_sha256"`
		CharsmapKeys       int    `json:"charsmap_keys"`
		CharsmapValidKeys  int    `json:"charsmap_valid_keys"`
		CharsmapKeysSHA256 string `json:"charsmap_keys_sha256"`
	} `json:"digests"`
}

var (
	diffOnce sync.Once
	diff     diffGolden
	diffErr  error
)

func readDifferential(t testing.TB) *diffGolden {
	t.Helper()
	diffOnce.Do(func() {
		f, err := os.Open("testdata/differential.json.gz")
		if err != nil {
			diffErr = err
			return
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			diffErr = err
			return
		}
		diffErr = json.NewDecoder(z).Decode(&diff)
	})
	if diffErr != nil {
		t.Fatal(diffErr)
	}
	return &diff
}

func TestDifferential(t *testing.T) {
	g := readDifferential(t)
	if len(g.Models) < 7 {
		t.Fatalf("only %d models in the golden file", len(g.Models))
	}
	for name, dm := range g.Models {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, filepath.Join("testdata", dm.Path))
			if len(dm.Encode) == 0 || len(dm.Decode) == 0 {
				t.Fatal("no cases")
			}
			bad := 0
			for _, c := range dm.Encode {
				text := c.Text
				if c.Bytes != "" {
					b, err := base64.StdEncoding.DecodeString(c.Bytes)
					if err != nil {
						t.Fatal(err)
					}
					text = string(b)
				}
				if got := m.Encode(text); !slices.Equal(got, c.IDs) {
					bad++
					t.Errorf("Encode(%q)\n got %v\nwant %v", text, got, c.IDs)
				}
				if c.Pieces != nil {
					if got := m.EncodePieces(text); !slices.Equal(got, c.Pieces) {
						bad++
						t.Errorf("EncodePieces(%q)\n got %q\nwant %q", text, got, c.Pieces)
					}
				}
				if bad > 20 {
					t.Fatal("too many failures")
				}
			}
			for _, c := range dm.Decode {
				got, err := m.Decode(c.IDs)
				if err != nil {
					t.Errorf("Decode(%v): %v", c.IDs, err)
				} else if got != c.Text {
					bad++
					t.Errorf("Decode(%v)\n got %q\nwant %q", c.IDs, got, c.Text)
				}
				if bad > 20 {
					t.Fatal("too many failures")
				}
			}
		})
	}
}

// digest hashes "label:id,id,...\n" lines like gen_golden.py.
type digest struct {
	m   *Model
	buf []byte
	h   interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
}

func (d *digest) add(label, text string) {
	d.buf = append(d.buf[:0], label...)
	d.buf = append(d.buf, ':')
	for i, id := range d.m.Encode(text) {
		if i > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = strconv.AppendInt(d.buf, int64(id), 10)
	}
	d.buf = append(d.buf, '\n')
	d.h.Write(d.buf)
}

func (d *digest) sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// TestEveryScalar compares the encoding of every Unicode scalar value on its
// own with SentencePiece (through a digest of all of them).
func TestEveryScalar(t *testing.T) {
	if os.Getenv("NANOVOX_LONG_TESTS") == "" {
		t.Skip("encodes 1.1M strings; set NANOVOX_LONG_TESTS=1")
	}
	g := readDifferential(t)
	m := loadModel(t, filepath.Join("testdata", g.Digests.Model))
	d := &digest{m: m, h: sha256.New()}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		d.add(strings.ToUpper(strconv.FormatInt(int64(r), 16)), string(r))
	}
	if got := d.sum(); got != g.Digests.ScalarsSHA256 {
		t.Errorf("digest of all scalar encodings = %s, want %s", got, g.Digests.ScalarsSHA256)
	}
}

// TestEveryCharsmapKey enumerates the keys of the real model's charsmap
// and compares their encodings (alone, between letters, doubled) with
// SentencePiece through a digest.
func TestEveryCharsmapKey(t *testing.T) {
	if os.Getenv("NANOVOX_LONG_TESTS") == "" {
		t.Skip("encodes 670k strings; set NANOVOX_LONG_TESTS=1")
	}
	g := readDifferential(t)
	m := loadModel(t, filepath.Join("testdata", g.Digests.Model))
	keys := charsmapKeys(m.norm.cmap)
	if len(keys) != g.Digests.CharsmapKeys {
		t.Fatalf("charsmap has %d keys, want %d", len(keys), g.Digests.CharsmapKeys)
	}
	d := &digest{m: m, h: sha256.New()}
	valid := 0
	for _, k := range keys {
		if !utf8.ValidString(k) {
			continue
		}
		valid++
		label := hex.EncodeToString([]byte(k))
		d.add(label, k)
		d.add(label+"+", "a"+k+"b")
		d.add(label+"*", k+k)
	}
	if valid != g.Digests.CharsmapValidKeys {
		t.Errorf("%d valid UTF-8 keys, want %d", valid, g.Digests.CharsmapValidKeys)
	}
	if got := d.sum(); got != g.Digests.CharsmapKeysSHA256 {
		t.Errorf("digest of charsmap key encodings = %s, want %s", got, g.Digests.CharsmapKeysSHA256)
	}
}

// charsmapKeys lists the keys of a charsmap trie in the order
// gen_golden.py's depth-first walk produces.
func charsmapKeys(c *charsmap) []string {
	type item struct {
		pos    uint32
		prefix string
	}
	var keys []string
	stack := []item{{0, ""}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		base := it.pos ^ dartsOffset(c.units[it.pos])
		for b := uint32(255); b >= 1; b-- {
			child := base ^ b
			if !dartsInRange(child, c.units) || dartsLabel(c.units[child]) != b {
				continue
			}
			key := it.prefix + string([]byte{byte(b)})
			if dartsHasLeaf(c.units[child]) {
				keys = append(keys, key)
			}
			stack = append(stack, item{child, key})
		}
	}
	return keys
}
