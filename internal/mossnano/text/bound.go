package text

import (
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Splitting by token budget (step 3) asks, for candidate prefixes of a
// clause, whether they fit the budget. Encoding every candidate, as
// OpenMOSS does, costs O(n) per candidate and O(n²) per clause: a clause of
// 4,096 emoji took 0.7 s. Most candidates are far over the budget, so a
// cheap lower bound on their token count answers them without encoding;
// only candidates near the budget are encoded. The answers, and so the
// chunks, are the same as OpenMOSS's: a candidate is only skipped when its
// count provably exceeds the budget.
//
// The bound needs the vocabulary of a SentencePiece model with byte
// fallback (spm.Model provides it); for other tokenizers every weight is 0
// and every candidate is encoded, as before.
//
// Why it holds: with byte fallback every token is either a vocabulary
// piece, covering a span of the normalized text no longer than the piece,
// or one byte of one character. A character c whose normalized image
// (alone, and unchanged next to each neighbour) is the string s adds the
// characters of s to the normalized text. A character r of s that occurs
// in some pieces lies in a token of at most maxRunes(r) characters, the
// longest such piece, so giving r the weight 1/maxRunes(r) gives each
// token's characters at most 1 in total; r in no piece is always unknown
// and becomes len(UTF-8(r)) byte tokens, its weight. When no piece has the
// dummy prefix ("▁") after its start, a token also lies within one word,
// so a word of n normalized characters gives each at least 1/n. Spaces,
// characters the normalizer deletes or that may compose with a neighbour
// (combining marks, Hangul jamo, and their neighbours) weigh 0. The count
// is at least the sum of the weights. The argument assumes normalizer
// rules span at most two characters, as NFKC's do apart from composition.
//
// Runs of weightless characters (a long run of combining marks or jamo)
// still cost O(n²), bounded by the input limit.

// vocab is what the bound needs of a tokenizer beyond Encode.
type vocab interface {
	Normalize(string) string
	VocabSize() int
	IDToPiece(int) string
}

// vocabInfo is the per-tokenizer part of the bound, computed once.
type vocabInfo struct {
	maxRunes     map[rune]int // longest piece (in characters) containing each character
	dummy        string       // what Normalize puts before a word ("▁")
	byteFallback bool
	// wordBound: no piece has the dummy prefix after its start, so a
	// token never spans two words.
	wordBound bool
}

var vocabInfos sync.Map // Tokenizer (comparable) -> *vocabInfo

func loadVocabInfo(tok Tokenizer) *vocabInfo {
	v, ok := tok.(vocab)
	if !ok {
		return nil
	}
	cacheable := reflect.TypeOf(tok).Comparable()
	if cacheable {
		if vi, ok := vocabInfos.Load(tok); ok {
			return vi.(*vocabInfo)
		}
	}
	vi := newVocabInfo(tok, v)
	if cacheable {
		vocabInfos.Store(tok, vi)
	}
	return vi
}

func isBytePiece(p string) bool {
	return len(p) == 6 && strings.HasPrefix(p, "<0x") && p[5] == '>'
}

func newVocabInfo(tok Tokenizer, v vocab) *vocabInfo {
	vi := &vocabInfo{maxRunes: make(map[rune]int)}
	for id := range v.VocabSize() {
		p := v.IDToPiece(id)
		if isBytePiece(p) {
			continue
		}
		n := utf8.RuneCountInString(p)
		for _, r := range p {
			vi.maxRunes[r] = max(vi.maxRunes[r], n)
		}
	}
	a := v.Normalize("a")
	if !strings.HasSuffix(a, "a") {
		return vi // unexpected normalizer: no bound
	}
	vi.dummy = strings.TrimSuffix(a, "a")
	vi.wordBound = vi.dummy != ""
	for id := range v.VocabSize() {
		if p := v.IDToPiece(id); len(p) > len(vi.dummy) && strings.Contains(p[1:], vi.dummy) {
			vi.wordBound = false
			break
		}
	}
	// Byte fallback is a model-wide switch: a character in no piece comes
	// out as byte pieces with it, as one unknown piece (possibly merged
	// with its unknown neighbours) without it.
	for _, probe := range []rune{0x10fffd, 0xffffd, 0xe000} {
		if vi.maxRunes[probe] > 0 || v.Normalize(string(probe)) != vi.dummy+string(probe) {
			continue
		}
		bytes := 0
		for _, id := range tok.Encode(string(probe)) {
			if isBytePiece(v.IDToPiece(id)) {
				bytes++
			}
		}
		vi.byteFallback = bytes == utf8.RuneLen(probe)
		break
	}
	return vi
}

// bounder gives lower bounds on the token counts of spans of one clause.
type bounder struct {
	vi     *vocabInfo
	v      vocab
	images map[rune]string  // image(c)
	sep    map[rune]bool    // c separates words
	pairs  map[[2]rune]bool // c's neighbour leaves c alone
	prefix []float64        // prefix[i] is the weight of clause[:i]
}

func newBounder(tok Tokenizer) *bounder {
	vi := loadVocabInfo(tok)
	if vi == nil || !vi.byteFallback || vi.dummy == "" {
		return nil
	}
	return &bounder{vi: vi, v: tok.(vocab), images: make(map[rune]string), sep: make(map[rune]bool), pairs: make(map[[2]rune]bool)}
}

// reset computes the prefix weights of a new clause.
func (b *bounder) reset(clause []rune) {
	b.prefix = append(b.prefix[:0], 0)
	sum := 0.0
	word, wordLen := -1, 0 // the current word's end and length, if all its characters stay
	for i, c := range clause {
		w := b.weight(clause, i, c)
		if w > 0 && b.vi.wordBound {
			// A token lies within one word, which normalizes to the dummy
			// prefix and the word's characters when they all stay as they
			// are and the characters around it separate words.
			if i >= word {
				word, wordLen = b.word(clause, i)
			}
			if wordLen > 0 {
				w = max(w, float64(utf8.RuneCountInString(b.image(c)))/float64(wordLen))
			}
		}
		sum += w
		b.prefix = append(b.prefix, sum)
	}
}

// word returns the end of the word starting at or containing clause[i],
// and its normalized length in characters, or 0 when that is not known.
func (b *bounder) word(clause []rune, i int) (end, n int) {
	start := i
	for start > 0 && !isSpace(clause[start-1]) {
		start--
	}
	end = i
	for end < len(clause) && !isSpace(clause[end]) {
		end++
	}
	if start > 0 && !b.separates(clause[start-1]) || end < len(clause) && !b.separates(clause[end]) {
		return end, 0
	}
	n = utf8.RuneCountInString(b.vi.dummy)
	for j := start; j < end; j++ {
		if b.weight(clause, j, clause[j]) == 0 {
			return end, 0
		}
		n += utf8.RuneCountInString(b.image(clause[j]))
	}
	return end, n
}

// separates reports whether c separates words: between two letters it
// becomes the dummy prefix of the second (a space does; a character the
// normalizer deletes does not, and would join the words).
func (b *bounder) separates(c rune) bool {
	ok, seen := b.sep[c]
	if !seen {
		d := b.vi.dummy
		ok = b.v.Normalize("a"+string(c)+"a") == d+"a"+d+"a"
		b.sep[c] = ok
	}
	return ok
}

func (b *bounder) weight(clause []rune, i int, c rune) float64 {
	if isSpace(c) || joins(c) {
		return 0
	}
	img := b.image(c)
	if img == "" {
		return 0
	}
	// Canonical composition can join three characters (Hangul L V T)
	// where no two of them join alone.
	if i > 0 && joins(clause[i-1]) || i+1 < len(clause) && joins(clause[i+1]) {
		return 0
	}
	if i > 0 && !b.pair(clause[i-1], c, false) {
		return 0
	}
	if i+1 < len(clause) && !b.pair(c, clause[i+1], true) {
		return 0
	}
	w := 0.0
	for _, r := range img {
		if n := b.vi.maxRunes[r]; n > 0 {
			w += 1 / float64(n)
		} else {
			w += float64(utf8.RuneLen(r))
		}
	}
	return w
}

// image returns what c normalizes to on its own without the dummy prefix
// ("A" for "Ａ", "c" for "c"), or "" if that is empty or holds a space.
func (b *bounder) image(c rune) string {
	img, seen := b.images[c]
	if !seen {
		n := b.v.Normalize(string(c))
		if strings.HasPrefix(n, b.vi.dummy) {
			img = n[len(b.vi.dummy):]
		}
		if strings.Contains(img, b.vi.dummy) || strings.ContainsRune(img, ' ') {
			img = ""
		}
		b.images[c] = img
	}
	return img
}

// pair reports whether a character keeps its image next to its
// neighbour: for (prev, c), cFirst false, the normalized pair ends in c's
// image; for (c, next), cFirst true, it starts with the dummy prefix and
// c's image.
func (b *bounder) pair(x, y rune, cFirst bool) bool {
	key := [2]rune{x, y}
	if cFirst {
		// Separate cache entries for the two questions about one pair.
		key = [2]rune{-1 - x, y}
	}
	ok, seen := b.pairs[key]
	if !seen {
		n := b.v.Normalize(string(x) + string(y))
		if cFirst {
			ok = strings.HasPrefix(n, b.vi.dummy+b.image(x))
		} else {
			ok = strings.HasSuffix(n, b.image(y))
		}
		b.pairs[key] = ok
	}
	return ok
}

// over reports whether clause[i:j] provably has more than limit tokens.
func (b *bounder) over(i, j, limit int) bool {
	if b == nil {
		return false
	}
	// The weights are sums of 1/k; allow for rounding before the ceiling.
	return int(math.Ceil(b.prefix[j]-b.prefix[i]-1e-6)) > limit
}

// joins reports whether c may compose with a neighbour: combining marks
// and Hangul jamo.
func joins(c rune) bool {
	return unicode.Is(unicode.M, c) || (c >= 0x1100 && c <= 0x11ff) ||
		(c >= 0x3130 && c <= 0x318f) || (c >= 0xa960 && c <= 0xa97f) || (c >= 0xd7b0 && c <= 0xd7ff)
}
