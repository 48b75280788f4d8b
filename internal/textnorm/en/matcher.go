package en

// matcher runs the rule matchers over one input.
type matcher struct {
	n  *Normalizer
	rs []rune
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
	if end <= start || !c.m.boundary(end) {
		return
	}
	for _, t := range c.list {
		if t.end == end {
			if w < t.w {
				t.w, t.out = w, out
			}
			return
		}
	}
	c.list = append(c.list, &token{start: start, end: end, w: w, out: out})
}

// classify returns the non-punctuation tokens that can start at p.
func (m *matcher) classify(p int) []*token {
	c := &cands{m: m}
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
		c.add(p, j, wFallback, m.str(p, j))
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
		out = append(out, &token{start: p, end: end, w: w, out: m.str(p, end), punct: true})
	}
	if e := m.emphasis(q); e > 0 {
		emit(e)
		return out
	}
	if !m.n.isPunct(m.rs[q]) {
		return nil
	}
	r := q
	for r < len(m.rs) && m.n.isPunct(m.rs[r]) {
		r++
	}
	// A shorter group only matters when a token starting with a mark
	// (".5", "-3", "'70s", "(800)") follows it, so keep the last few ends;
	// that keeps long runs linear.
	for e := q + 1; e <= r; e++ {
		if e-q <= 3 || r-e <= 3 || (e < len(m.rs) && m.rs[e] == '<' && m.emphasis(e) > 0) {
			emit(e)
		}
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
