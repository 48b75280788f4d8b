package en

import (
	"strings"
	"sync"
)

// matcher runs the rule matchers over one input.
type matcher struct {
	n  *Normalizer
	rs []rune
	// runEnd[i] is the end of the punctuation run containing i; computed
	// once so that punctuation tokens inside long runs cost O(1).
	runEnd []int32

	// Several rules read the same digits at the same position; these
	// caches keep that from multiplying the work.
	slab      []token
	cands     cands
	eEnd      []int32 // see eIndex; nil until first needed
	eDom      []int32
	numCache  map[int][]num
	memoTab   [nMemo][]memoEntry
	decCache  map[int][]decimalPart
	nameCache map[string]nameResult
	cardCache map[string]cardResult
}

// release returns m to the pool. Tokens handed out by m must no longer
// be used.
func (m *matcher) release() {
	clear(m.numCache)
	clear(m.nameCache)
	clear(m.cardCache)
	for k := range m.memoTab {
		clear(m.memoTab[k])
		m.memoTab[k] = m.memoTab[k][:0]
		if cap(m.memoTab[k]) > 1<<16 {
			m.memoTab[k] = nil
		}
	}
	clear(m.decCache)
	m.eEnd, m.eDom = nil, nil
	clear(m.slab)
	clear(m.cands.list)
	m.cands.list = m.cands.list[:0]
	m.slab = m.slab[:0]
	m.n, m.rs = nil, nil
	if cap(m.runEnd) > 1<<16 {
		m.runEnd = nil // do not pin huge inputs
	}
	matcherPool.Put(m)
}

// newToken hands out tokens from a slab: one allocation per 128 tokens.
// Only the current slab is recycled; tokens in older slabs stay valid.
func (m *matcher) newToken() *token {
	if len(m.slab) == cap(m.slab) {
		m.slab = make([]token, 0, 128)
	}
	m.slab = m.slab[:len(m.slab)+1]
	return &m.slab[len(m.slab)-1]
}

// Memoized sub-matchers (clock, years, fractions), indexed by kind.
const (
	memoClock = iota
	memoYears
	memoFractions
	nMemo
)

type memoEntry struct {
	done bool
	v    []span
}

// memo returns the cached result of f at i, computing it once.
func (m *matcher) memo(kind, i int, f func(int) []span) []span {
	tab := m.memoTab[kind]
	if len(tab) != len(m.rs)+1 {
		if cap(tab) >= len(m.rs)+1 {
			tab = tab[:len(m.rs)+1]
		} else {
			tab = make([]memoEntry, len(m.rs)+1)
		}
		m.memoTab[kind] = tab
	}
	if e := &tab[i]; e.done {
		return e.v
	}
	r := f(i)
	tab[i] = memoEntry{true, r}
	return r
}

type nameResult struct {
	s  string
	ok bool
}

type cardResult struct {
	s  string
	w  weight
	ok bool
}

func (m *matcher) names(d string) (string, bool) {
	if r, ok := m.nameCache[d]; ok {
		return r.s, r.ok
	}
	s, ok := m.n.names(d)
	if m.nameCache == nil {
		m.nameCache = make(map[string]nameResult)
	}
	m.nameCache[d] = nameResult{s, ok}
	return s, ok
}

func (m *matcher) graphWithAnd(d string) (string, weight, bool) {
	s, ok := m.names(d)
	if !ok {
		return "", 0, false
	}
	out, w := withAnd(s)
	return out, w, true
}

func (m *matcher) cardinal(d string, commas bool) (string, weight, bool) {
	key := d
	if commas {
		key += ","
	}
	if r, ok := m.cardCache[key]; ok {
		return r.s, r.w, r.ok
	}
	s, w, ok := m.n.cardinal(d, commas)
	if m.cardCache == nil {
		m.cardCache = make(map[string]cardResult)
	}
	m.cardCache[key] = cardResult{s, w, ok}
	return s, w, ok
}

// matcherPool recycles matchers with their caches and token slab; a
// matcher is reset before reuse and never shared between goroutines.
var matcherPool = sync.Pool{New: func() any { return new(matcher) }}

func newMatcher(n *Normalizer, rs []rune) *matcher {
	m := matcherPool.Get().(*matcher)
	m.n, m.rs = n, rs
	if cap(m.runEnd) < len(rs) {
		m.runEnd = make([]int32, len(rs))
	}
	m.runEnd = m.runEnd[:len(rs)]
	end := len(rs)
	for i := len(rs) - 1; i >= 0; i-- {
		if !n.isPunct(rs[i]) {
			end = i
		}
		m.runEnd[i] = int32(end)
	}
	return m
}

func (m *matcher) str(i, j int) string { return string(m.rs[i:j]) }

// at returns the rune at i, or 0 past the end.
func (m *matcher) at(i int) rune {
	if i >= 0 && i < len(m.rs) {
		return m.rs[i]
	}
	return 0
}

// hasPrefix reports whether the input at i starts with s.
func (m *matcher) hasPrefix(i int, s string) bool {
	for _, r := range s {
		if i >= len(m.rs) || m.rs[i] != r {
			return false
		}
		i++
	}
	return true
}

// boundary reports whether a classified token may end at i: the next
// token must be separated by a space or be punctuation.
func (m *matcher) boundary(i int) bool {
	return i >= len(m.rs) || isSpace(m.rs[i]) || m.n.isPunct(m.rs[i])
}

// digitRun returns the end of the ASCII digit run starting at i.
func (m *matcher) digitRun(i int) int {
	for i < len(m.rs) && isDigit(m.rs[i]) {
		i++
	}
	return i
}

// spaceRun returns the end of the space run starting at i.
func (m *matcher) spaceRun(i int) int {
	for i < len(m.rs) && isSpace(m.rs[i]) {
		i++
	}
	return i
}

// optSpace skips at most one space (pynutil.delete(" ").ques).
func (m *matcher) optSpace(i int) []int {
	if m.at(i) == ' ' {
		return []int{i, i + 1}
	}
	return []int{i}
}

// num is a digit string found in the input.
type num struct {
	end    int
	digits string // commas removed
	commas bool
}

// numbers lists the digit strings starting at i that the cardinal graph's
// input side accepts: a plain digit run, or 1-3 digits followed by
// comma-separated groups of three.
func (m *matcher) numbers(i int) []num {
	j := m.digitRun(i)
	if j == i {
		return nil
	}
	if r, ok := m.numCache[i]; ok {
		return r
	}
	if m.numCache == nil {
		m.numCache = make(map[int][]num)
	}
	r := m.numbersAt(i, j)
	m.numCache[i] = r
	return r
}

func (m *matcher) numbersAt(i, j int) []num {
	out := []num{{end: j, digits: m.str(i, j)}}
	if j-i <= 3 {
		d := m.str(i, j)
		for k := j; m.at(k) == ',' && m.digitRun(k+1) == k+4; k += 4 {
			d += m.str(k+1, k+4)
			out = append(out, num{end: k + 4, digits: d, commas: true})
		}
	}
	return out
}

// add collects candidates keeping, per end position, the cheapest one;
// on a tie the earlier rule wins.
type cands struct {
	m    *matcher
	list []*token
}

func (c *cands) add(start, end int, w weight, out string) {
	c.put(start, end, w, out, nil)
}

// addLazy is add for a reading that is only worth building if chosen.
func (c *cands) addLazy(start, end int, w weight, gen func() string) {
	c.put(start, end, w, "", gen)
}

// last returns the most recently added candidate.
func (c *cands) last() *token {
	if len(c.list) == 0 {
		return nil
	}
	return c.list[len(c.list)-1]
}

func (c *cands) put(start, end int, w weight, out string, gen func() string) {
	if end <= start || !c.m.boundary(end) {
		return
	}
	for _, t := range c.list {
		if t.end == end {
			if w < t.w {
				t.w, t.out, t.gen, t.raw = w, out, gen, false
			}
			return
		}
	}
	t := c.m.newToken()
	*t = token{start: start, end: end, w: w, out: out, gen: gen}
	c.list = append(c.list, t)
}

// classify returns the non-punctuation tokens that can start at p.
func (m *matcher) classify(p int) []*token {
	// The candidate list is reused from position to position: the DP only
	// keeps the tokens, not the slice.
	c := &m.cands
	c.m, c.list = m, c.list[:0]
	r := m.rs[p]
	numeric := isDigit(r) || r == '-' || r == '.'
	if numeric {
		m.cardinalRule(c, p)
		m.ordinalRule(c, p)
	}
	m.wordRule(c, p)
	m.dateRule(c, p)
	if numeric {
		m.decimalRule(c, p)
	}
	m.fractionRule(c, p)
	if isDigit(r) {
		m.timeRule(c, p)
	}
	m.measureRule(c, p)
	m.moneyRule(c, p)
	m.telephoneRule(c, p)
	if isAlpha(r) {
		m.electronicRule(c, p)
	}
	m.serialRule(c, p)
	m.whitelistRule(c, p)
	m.rangeRule(c, p)
	if !m.n.isPunct(r) {
		j := p
		for j < len(m.rs) && !isSpace(m.rs[j]) && !m.n.isPunct(m.rs[j]) {
			j++
		}
		c.addLazy(p, j, wFallback, func() string { return m.fallback(p, j) })
	}
	return c.list
}

// punct returns the punctuation tokens that can start at p: absorbed
// leading spaces, then either an emphasis tag like <p> or a run of marks,
// then absorbed trailing spaces.
func (m *matcher) punct(p int) []*token {
	q := m.spaceRun(p)
	if q >= len(m.rs) {
		return nil
	}
	lead := weight(q - p)
	var out []*token
	emit := func(e int) {
		end := e
		if e == len(m.rs) || !m.n.isPunct(m.rs[e]) {
			end = m.spaceRun(e)
		}
		w := wPunct + (lead+weight(end-e))*wPunctSpace
		if e-q >= 2 {
			w -= wSmall
		}
		t := m.newToken()
		*t = token{start: p, end: end, w: w, punct: true}
		out = append(out, t)
	}
	if e := m.emphasis(q); e > 0 {
		emit(e)
		return out
	}
	if !m.n.isPunct(m.rs[q]) {
		return nil
	}
	r := int(m.runEnd[q])
	// A shorter group only matters when a token starting with a mark
	// (".5", "-3", "'70s", "(800)", "<p>") follows it, so keep the first
	// and last few ends; that keeps long runs linear.
	for e := q + 1; e <= r; e++ {
		if e-q > 3 && r-e > 3 {
			e = r - 3
		}
		emit(e)
	}
	return out
}

// emphasis matches an HTML-like tag such as <p>, <br/> or </p> at i and
// returns its end, or 0.
func (m *matcher) emphasis(i int) int {
	if m.at(i) != '<' {
		return 0
	}
	j := i + 1
	inner := func(r rune) bool { return r != 0 && !isSpace(r) && r != '<' && r != '>' }
	if m.at(j) == '/' {
		k := j + 1
		for inner(m.at(k)) {
			k++
		}
		if k > j+1 && m.at(k) == '>' {
			return k + 1
		}
	}
	k := j
	for inner(m.at(k)) {
		k++
	}
	if k > j && m.at(k) == '>' {
		return k + 1
	}
	return 0
}

// fallback reads a run no rule accepts ("#1", "5$"), for which upstream
// has no path and raises an error: digit runs are read as cardinals,
// symbols by their whitelist names, anything else is kept.
func (m *matcher) fallback(i, j int) string {
	var parts []string
	for k := i; k < j; {
		r := m.rs[k]
		e := k + 1
		switch {
		case isDigit(r):
			e = m.digitRun(k)
			if e-k > maxCardinalDigits {
				parts = append(parts, m.n.singleDigits(m.str(k, e)))
			} else {
				s, _, _ := m.cardinal(m.str(k, e), false)
				parts = append(parts, s)
			}
		case m.n.t.wSymbol[r] != "":
			parts = append(parts, m.n.t.wSymbol[r])
		default:
			for e < j && !isDigit(m.rs[e]) && m.n.t.wSymbol[m.rs[e]] == "" {
				e++
			}
			parts = append(parts, m.str(k, e))
		}
		k = e
	}
	return strings.Join(parts, " ")
}
