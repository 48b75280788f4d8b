// Package text prepares MOSS-TTS-Nano input text and splits it into chunks
// that are generated one after another, exactly like the OpenMOSS remote
// code (modeling_moss_tts_nano.py: _split_text_into_best_sentences and the
// voice-clone step of inference).
//
// The algorithm, on Unicode code points with Python's str semantics:
//
//  1. Prepare: strip; "\n" and "\r" become spaces; runs of spaces collapse.
//     Text containing CJK (U+4E00–9FFF, U+3400–4DBF, U+3040–30FF,
//     U+AC00–D7AF) gets "。" appended unless it ends in .!?。！？；; and is
//     otherwise left alone. Other text gets its first character
//     upper-cased unless it is already upper case (str.isupper), "."
//     appended if it ends in a letter or digit (str.isalnum), and eight
//     leading spaces if it has fewer than five words.
//  2. Split into sentences after .!?。！？；; (closing quotes and brackets
//     "'”’)]}）】》」』 right after stay with the sentence).
//  3. A sentence over the token budget is split into clauses after
//     ,，、；;：: and a clause still over it by token budget: the longest
//     prefix (found by binary search on its length) whose encoding fits,
//     cut back to the last boundary character (the punctuation above or a
//     space) among its last 24 characters if there is one.
//  4. Consecutive pieces are merged greedily while the running chunk's
//     token count plus the next piece's count stays within the budget,
//     joined by a space, or by nothing when either side contains CJK.
//  5. If that yields a single chunk, the original text is used unchanged.
//
// Token counts come from the model's tokenizer, so the chunks depend on it.
// Each chunk is followed by 0.40 s of silence if it has at most four
// whitespace-separated words, else 0.24 s (none after the last).
//
// mlx-audio's port (mlx_audio/tts/models/moss_tts_nano/text.py) differs; we
// follow OpenMOSS. mlx-audio first collapses every whitespace run to one
// space (OpenMOSS keeps tabs and other spaces), upper-cases the first
// character only if it is lower case (str.islower; OpenMOSS whenever it is
// not upper case, which differs for title-case letters such as ǅ), returns
// the stripped text rather than the original when there is a single chunk,
// returns no chunks instead of an error for empty text, clamps the budget
// to at least 1 where OpenMOSS disables splitting for a budget <= 0, and
// decodes all chunks' frames at once without the pauses.
package text

import (
	"context"
	"errors"
	"unicode/utf8"
)

// Tokenizer counts tokens; the SentencePiece model satisfies it.
type Tokenizer interface {
	Encode(string) []int
}

// Chunk is one piece of text generated on its own.
type Chunk struct {
	Text       string
	TokenIDs   []int   // Encode(Text)
	PauseAfter float64 // seconds of silence after this chunk; 0 for the last
}

// Pauses between chunks, in seconds (OpenMOSS
// DEFAULT_VOICE_CLONE_INTER_CHUNK_PAUSE_SHORT/LONG_SECONDS).
const (
	PauseShort = 0.40 // after a chunk of at most four words
	PauseLong  = 0.24
)

// Errors for input Split refuses.
var (
	ErrEmpty       = errors.New("text is empty")
	ErrInvalidUTF8 = errors.New("text is not valid UTF-8")
)

var (
	sentenceEnd = runeSet(".!?。！？；;")
	clauseSplit = runeSet(",，、；;：:")
	closing     = runeSet("\"'”’)]}）】》」』")
	boundary    = runeSet(",，、；;：:.!?。！？；; ")
)

func runeSet(s string) map[rune]bool {
	m := make(map[rune]bool)
	for _, r := range s {
		m[r] = true
	}
	return m
}

// Split prepares text and splits it into chunks of at most about maxTokens
// tokens as OpenMOSS does. A budget <= 0 disables splitting. Text that is
// empty or only whitespace returns ErrEmpty, invalid UTF-8 ErrInvalidUTF8.
//
// The budget is what OpenMOSS aims for, not a hard bound: a chunk exceeds
// it when a single character encodes to more tokens than the budget, when
// joining two pieces without a space (CJK) or BPE merges across the join
// make the chunk longer than the pieces' sum, or when the binary search of
// step 3 meets non-monotone token counts. A single chunk is the original
// text, whose count can differ slightly from the prepared text's.
func Split(tok Tokenizer, text string, maxTokens int) ([]Chunk, error) {
	return SplitContext(context.Background(), tok, text, maxTokens)
}

// SplitContext is Split that gives up with ctx's error once ctx is done:
// splitting a long text takes time, and a request whose client left should
// free its slot at once.
func SplitContext(ctx context.Context, tok Tokenizer, text string, maxTokens int) ([]Chunk, error) {
	if !utf8.ValidString(text) {
		return nil, ErrInvalidUTF8
	}
	if len(strip([]rune(text))) == 0 {
		return nil, ErrEmpty
	}
	var parts []string
	if maxTokens > 0 {
		s := splitter{ctx: ctx, tok: tok, max: maxTokens}
		var err error
		if parts, err = s.split(text); err != nil {
			return nil, err
		}
	}
	if len(parts) <= 1 {
		parts = []string{text}
	}
	chunks := make([]Chunk, len(parts))
	for i, p := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunks[i] = Chunk{Text: p, TokenIDs: tok.Encode(p)}
		if i < len(parts)-1 {
			chunks[i].PauseAfter = PauseLong
			if countWords(strip([]rune(p))) <= 4 {
				chunks[i].PauseAfter = PauseShort
			}
		}
	}
	return chunks, nil
}

type splitter struct {
	ctx context.Context
	tok Tokenizer
	max int
	// bound answers candidates of splitByBudget that are far over the
	// budget; made on first use, nil when the tokenizer gives no bound.
	bound      *bounder
	boundTried bool
}

func (s *splitter) count(rs []rune) int { return len(s.tok.Encode(string(rs))) }

// prepare is _prepare_text_for_sentence_chunking; text is not empty.
func prepare(text string) []rune {
	t := strip([]rune(text))
	out := make([]rune, 0, len(t)+9)
	for _, r := range t {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		if r == ' ' && len(out) > 0 && out[len(out)-1] == ' ' {
			continue
		}
		out = append(out, r)
	}
	if containsCJK(out) {
		if !sentenceEnd[out[len(out)-1]] {
			out = append(out, '。')
		}
		return out
	}
	if !isUpper(out[0]) {
		out = append(upper(out[0]), out[1:]...)
	}
	if isAlnum(out[len(out)-1]) {
		out = append(out, '.')
	}
	if countWords(out) < 5 {
		out = append([]rune("        "), out...)
	}
	return out
}

// splitByPunctuation is _split_text_by_punctuation: it cuts after every
// character of punct (with the closing quotes and brackets that follow)
// and returns the stripped, non-empty pieces.
func splitByPunctuation(t []rune, punct map[rune]bool) [][]rune {
	var out [][]rune
	start := 0
	for i := 0; i < len(t); {
		if !punct[t[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(t) && closing[t[j]] {
			j++
		}
		if p := strip(t[start:j]); len(p) > 0 {
			out = append(out, p)
		}
		for j < len(t) && isSpace(t[j]) {
			j++
		}
		start, i = j, j
	}
	if p := strip(t[start:]); len(p) > 0 {
		out = append(out, p)
	}
	return out
}

// splitByBudget is _split_text_by_token_budget. Candidates that provably
// exceed the budget are answered without encoding them (see bound.go), so
// a clause costs O(n) encoded characters rather than O(n²).
func (s *splitter) splitByBudget(t []rune) ([][]rune, error) {
	if !s.boundTried {
		s.bound, s.boundTried = newBounder(s.tok), true
	}
	if s.bound != nil {
		s.bound.reset(t)
	}
	// rest is t[a:b], stripped.
	a, b := stripBounds(t, 0, len(t))
	var pieces [][]rune
	for a < b {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		rest := t[a:b]
		if !s.bound.over(a, b, s.max) && s.count(rest) <= s.max {
			pieces = append(pieces, rest)
			break
		}
		// Longest prefix that fits, by binary search on its length.
		best := 1
		for lo, hi := 1, len(rest); lo <= hi; {
			mid := (lo + hi) / 2
			ci, cj := stripBounds(t, a, a+mid)
			switch {
			case ci == cj:
				lo = mid + 1
			case !s.bound.over(ci, cj, s.max) && s.count(t[ci:cj]) <= s.max:
				best = mid
				lo = mid + 1
			default:
				hi = mid - 1
			}
		}
		// Prefer to cut after a boundary among the prefix's last 24
		// characters (upstream scans range(len-1, len-25, -1)).
		cut := best
		for i := best - 1; i > best-25 && i >= 0; i-- {
			if boundary[rest[i]] {
				cut = i + 1
				break
			}
		}
		piece := strip(rest[:cut])
		if len(piece) == 0 {
			piece = strip(rest[:best])
			cut = best
		}
		pieces = append(pieces, piece)
		a, b = stripBounds(t, a+cut, b)
	}
	return pieces, nil
}

// join is _join_sentence_parts for non-empty parts.
func join(left, right []rune) []rune {
	out := make([]rune, 0, len(left)+1+len(right))
	out = append(out, left...)
	if !containsCJK(left) && !containsCJK(right) {
		out = append(out, ' ')
	}
	return append(out, right...)
}

// piece is a sentence, clause or budget cut with its token count.
type piece struct {
	tokens int
	text   []rune
}

// split is _split_text_into_best_sentences for a positive budget.
func (s *splitter) split(text string) ([]string, error) {
	prepared := prepare(text)
	sentences := splitByPunctuation(prepared, sentenceEnd)
	if len(sentences) == 0 {
		sentences = [][]rune{strip(prepared)}
	}
	var pieces []piece
	add := func(t []rune, n int) { pieces = append(pieces, piece{n, t}) }
	for _, sentence := range sentences {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		sentence = strip(sentence)
		if len(sentence) == 0 {
			continue
		}
		if n := s.count(sentence); n <= s.max {
			add(sentence, n)
			continue
		}
		clauses := splitByPunctuation(sentence, clauseSplit)
		if len(clauses) <= 1 {
			clauses = [][]rune{sentence}
		}
		for _, clause := range clauses {
			clause = strip(clause)
			if len(clause) == 0 {
				continue
			}
			if n := s.count(clause); n <= s.max {
				add(clause, n)
				continue
			}
			budgeted, err := s.splitByBudget(clause)
			if err != nil {
				return nil, err
			}
			for _, p := range budgeted {
				if p = strip(p); len(p) > 0 {
					add(p, s.count(p))
				}
			}
		}
	}

	var chunks []string
	var cur []rune
	curTokens := 0
	for i, p := range pieces {
		if i%64 == 0 {
			if err := s.ctx.Err(); err != nil {
				return nil, err
			}
		}
		switch {
		case len(cur) == 0:
			cur, curTokens = p.text, p.tokens
		case curTokens+p.tokens > s.max:
			chunks = append(chunks, string(strip(cur)))
			cur, curTokens = p.text, p.tokens
		default:
			cur = join(cur, p.text)
			curTokens = s.count(cur)
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, string(strip(cur)))
	}
	if len(chunks) == 0 {
		chunks = []string{string(strip(prepared))}
	}
	return chunks, nil
}
