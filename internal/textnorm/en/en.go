// Package en is a Go port of the English text normalizer of WeTextProcessing
// (tn.english.normalizer.Normalizer with its default, non-deterministic
// options), as used by MOSS-TTS-Nano before speech synthesis: "$12.05" ->
// "twelve point oh five dollars", "2024-05-06" -> "the sixth of may twenty
// twenty four".
//
// Upstream compiles its rules into weighted finite-state transducers and
// takes the cheapest tagging of the whole sentence. This port keeps that
// model without the FST machinery: each rule is a hand-written matcher that,
// from a start position, reports the spans it can tag with the rule weight
// plus the cheapest internal path weight, and the spoken form that the
// upstream verbalizer would choose for it. A shortest-path search over the
// sentence (tokens separated by one space or by punctuation tokens) then
// picks the segmentation, exactly as upstream's tagger lattice does, and
// the spoken forms are joined with upstream's spacing rules.
package en

import (
	"strings"
	"sync"
	"unicode"
)

// Normalizer normalizes English text for speech. It is immutable after New
// and safe for concurrent use.
type Normalizer struct {
	t *tables
}

var (
	defaultOnce sync.Once
	defaultNorm *Normalizer
)

// New returns the English normalizer. The data tables are parsed once per
// process; later calls return the same value.
func New() *Normalizer {
	defaultOnce.Do(func() {
		t, err := loadTables()
		if err != nil {
			// The tables are embedded: failing to parse them is a build defect.
			panic("textnorm/en: " + err.Error())
		}
		defaultNorm = &Normalizer{t: t}
	})
	return defaultNorm
}

// Rule weights from the upstream RuleSpec inventory.
const (
	wCardinal   = wUnit
	wOrdinal    = wUnit
	wWord       = 100 * wUnit
	wDate       = 99 * wUnit / 100
	wDecimal    = wUnit
	wFraction   = 99 * wUnit / 100
	wTime       = wUnit
	wMeasure    = wUnit
	wMoney      = wUnit
	wTelephone  = wUnit
	wElectronic = wUnit
	wSerial     = 101 * wUnit / 100
	wWhitelist  = wUnit
	wRange      = wUnit
	wPunct      = 2 * wUnit
	wPunctSpace = -wUnit // every space a punctuation token absorbs
	// wFallback tags a run that no rule accepts. Upstream raises an error
	// for such input; a TTS front end is better served by passing it on.
	wFallback = 1 << 40
)

// token is one tagged span of the input and its spoken form.
type token struct {
	start, end int
	w          weight
	out        string
	gen        func() string // builds out when set
	raw        bool          // out is the input span
	punct      bool
}

// text returns the spoken form. Verbatim and lazily built readings are
// only materialised once the path is known: building them for every
// candidate would make long runs quadratic.
func (t *token) text(rs []rune) string {
	switch {
	case t.gen != nil:
		return t.gen()
	case t.punct || t.raw:
		return string(rs[t.start:t.end])
	}
	return t.out
}

// DP states: what the previous item was.
const (
	stStart = iota // only deleted leading spaces so far
	stClass        // a classified (non-punctuation) token: needs a separator
	stSpace        // a deleted separator space
	stPunct        // a punctuation token
	nStates
)

type cell struct {
	w         weight
	tok       *token // nil for a deleted space run
	prevPos   int32
	prevState int8
	reached   bool
}

// cellPool recycles the DP table, by far the largest allocation.
var cellPool = sync.Pool{New: func() any { return new([]cell) }}

// Normalize returns the spoken form of s.
func (n *Normalizer) Normalize(s string) string {
	if s == "" {
		return ""
	}
	rs := []rune(s)
	m := newMatcher(n, rs)
	defer m.release() // after rendering: the tokens live in m's slab
	toks := n.tag(m)
	for _, t := range toks {
		t.out = t.text(rs)
	}
	return render(toks)
}

// tag finds the cheapest tokenization of rs.
func (n *Normalizer) tag(m *matcher) []*token {
	rs := m.rs
	L := len(rs)
	buf := cellPool.Get().(*[]cell)
	defer cellPool.Put(buf)
	if cap(*buf) < (L+1)*nStates {
		*buf = make([]cell, (L+1)*nStates)
	}
	cells := (*buf)[:(L+1)*nStates]
	clear(cells)
	at := func(p, st int) *cell { return &cells[p*nStates+st] }
	relax := func(p, st int, w weight, fromP, fromSt int, tok *token) {
		c := at(p, st)
		if !c.reached || w < c.w {
			*c = cell{w: w, reached: true, prevPos: int32(fromP), prevState: int8(fromSt), tok: tok}
		}
	}
	at(0, stStart).reached = true
	for p := 0; p < L; p++ {
		var classes []*token
		classesDone := false
		var puncts []*token
		punctsDone := false
		for st := 0; st < nStates; st++ {
			c := at(p, st)
			if !c.reached {
				continue
			}
			if isSpace(rs[p]) {
				q := p
				for q < L && isSpace(rs[q]) {
					q++
				}
				next := stSpace
				if st == stStart {
					next = stStart
				}
				relax(q, next, c.w, p, st, nil)
			}
			if !punctsDone {
				puncts, punctsDone = m.punct(p), true
			}
			for _, t := range puncts {
				relax(t.end, stPunct, c.w+t.w, p, st, t)
			}
			if st == stClass || isSpace(rs[p]) {
				continue
			}
			if !classesDone {
				classes, classesDone = m.classify(p), true
			}
			for _, t := range classes {
				relax(t.end, stClass, c.w+t.w, p, st, t)
			}
		}
	}
	bestSt := -1
	for st := 0; st < nStates; st++ {
		if c := at(L, st); c.reached && (bestSt < 0 || c.w < at(L, bestSt).w) {
			bestSt = st
		}
	}
	var toks []*token
	for p, st := L, bestSt; p > 0; {
		c := at(p, st)
		if c.tok != nil {
			toks = append(toks, c.tok)
		}
		p, st = int(c.prevPos), int(c.prevState)
	}
	for i, j := 0, len(toks)-1; i < j; i, j = i+1, j-1 {
		toks[i], toks[j] = toks[j], toks[i]
	}
	return toks
}

// render joins spoken forms as upstream's verbalizer does: a classified
// token is followed by one space unless punctuation follows; punctuation
// tokens carry their own surrounding spaces; one trailing space is dropped.
func render(toks []*token) string {
	var b strings.Builder
	for i, t := range toks {
		b.WriteString(t.out)
		if !t.punct && i+1 < len(toks) && !toks[i+1].punct {
			b.WriteByte(' ')
		}
	}
	out := b.String()
	return strings.TrimSuffix(out, " ")
}

// isSpace is upstream's SPACE: ASCII whitespace and NO-BREAK SPACE.
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0':
		return true
	}
	return false
}

// isPunct reports whether r is a punctuation mark for the punctuation
// rule: Unicode P* (except [ and ]) plus ASCII symbols, minus the symbols
// the whitelist speaks ("&", "%", "/", ...).
func (n *Normalizer) isPunct(r rune) bool {
	if r < 0x80 {
		return asciiPunct[r]
	}
	return n.isPunctSlow(r)
}

// asciiPunct caches isPunctSlow for ASCII, the hot path.
var asciiPunct = func() (t [128]bool) {
	for _, r := range "!'(),-.:;<>?`{}\"\\" {
		t[r] = true
	}
	return t
}()

func (n *Normalizer) isPunctSlow(r rune) bool {
	if r == '[' || r == ']' {
		return false
	}
	if _, ok := n.t.wSymbol[r]; ok {
		return false
	}
	if r < 0x80 {
		return strings.ContainsRune("!#%&'()*+,-./:;<=>?@^_`{|}~\"\\", r)
	}
	return unicode.IsPunct(r)
}

// isWordChar is the word rule's alphabet: not space, not punctuation, not
// an ASCII digit and not one of the symbols other rules read.
func (n *Normalizer) isWordChar(r rune) bool {
	if isSpace(r) || n.isPunct(r) || isDigit(r) {
		return false
	}
	switch r {
	case '$', '€', '₩', '£', '¥', '#', '%':
		return false
	}
	return true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isAlpha(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
