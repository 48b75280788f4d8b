package en

import "strings"

// eChar reports whether r may appear in an e-mail user name or domain.
func (m *matcher) eChar(r rune) bool {
	if isAlpha(r) || isDigit(r) {
		return true
	}
	_, ok := m.n.t.eSymbol[r]
	return ok
}

// eIndex computes, once per input, the end of each run of e-mail/domain
// characters and a prefix count of common-domain suffixes (".com"), so
// that electronicRule costs O(1) per position on runs like "a.a.a.a".
func (m *matcher) eIndex() {
	if m.eEnd != nil {
		return
	}
	L := len(m.rs)
	m.eEnd = make([]int32, L+1)
	m.eDom = make([]int32, L+1)
	end := L
	for i := L - 1; i >= 0; i-- {
		if !m.eChar(m.rs[i]) {
			end = i
		}
		m.eEnd[i] = int32(end)
	}
	m.eEnd[L] = int32(L)
	for i := 0; i < L; i++ {
		m.eDom[i+1] = m.eDom[i]
		if m.rs[i] == '.' {
			for k := range m.n.t.eDomain {
				if m.hasPrefix(i, k) {
					m.eDom[i+1]++
					break
				}
			}
		}
	}
}

// commonDomainsIn counts common-domain suffixes starting in [i, j).
func (m *matcher) commonDomainsIn(i, j int) int {
	return int(m.eDom[j] - m.eDom[i])
}

// eSpell reads a user name or domain: letters stay, digits and symbols are
// spoken one by one ("cdf1" -> "cdf one", "a-b" -> "a dash b").
func (m *matcher) eSpell(rs []rune) string {
	var b strings.Builder
	sp := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case isAlpha(r):
			b.WriteRune(r)
		case isDigit(r):
			sp()
			// "5000" -> "five thousand" is preferred by a small weight
			if r != '0' && i+3 < len(rs) && string(rs[i+1:i+4]) == "000" {
				b.WriteString(m.n.t.digit[string(r)] + " thousand ")
				i += 3
				continue
			}
			b.WriteString(m.n.t.digitOrZero(string(r)) + " ")
		default:
			sp()
			b.WriteString(m.n.t.eSymbol[r] + " ")
		}
	}
	return strings.TrimSpace(b.String())
}

// eDomain reads a domain, giving one common suffix its lexicon reading
// (".uk" -> "dot UK", ".jpg" -> "dot jpeg").
func (m *matcher) eDomain(rs []rune) string {
	s := string(rs)
	bestAt, bestKey := -1, ""
	for k := range m.n.t.eDomain {
		if i := strings.LastIndex(s, k); i >= 0 && (i > bestAt || i == bestAt && len(k) > len(bestKey)) {
			bestAt, bestKey = i, k
		}
	}
	if bestAt < 0 {
		return m.eSpell(rs)
	}
	pre := []rune(s[:bestAt])
	post := []rune(s[bestAt+len(bestKey):])
	parts := []string{}
	if len(pre) > 0 {
		parts = append(parts, m.eSpell(pre))
	}
	parts = append(parts, m.n.t.eDomain[bestKey])
	if len(post) > 0 {
		parts = append(parts, m.eSpell(post))
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// domainEnds lists the ends of a domain starting at i: a letter, then
// domain characters, ending on a letter, digit or "/".
//
// Only the two longest ends are kept: a shorter domain is only needed when
// punctuation follows, and the longest end already stops before a trailing
// mark ("google.com." ends before the last dot).
func (m *matcher) domainEnds(i int) []int {
	if !isAlpha(m.at(i)) {
		return nil
	}
	m.eIndex()
	j := int(m.eEnd[i])
	if j-i > 256 {
		j = i + 256
	}
	var ends []int
	for e := j; e > i && len(ends) < 2; e-- {
		if r := m.rs[e-1]; (isAlpha(r) || isDigit(r) || r == '/') && m.boundary(e) {
			ends = append(ends, e)
		}
	}
	return ends
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// electronicRule: "cdf1@abc.edu" -> "cdf one at abc dot edu",
// "Thepodule.com" -> "Thepodule dot com", "https://www.abc.com".
func (m *matcher) electronicRule(c *cands, p int) {
	// Every form needs a dot or "://" before the next space.
	worth := false
	for j := p; j < len(m.rs) && !isSpace(m.rs[j]) && j-p < 256; j++ {
		if m.rs[j] == '.' || m.rs[j] == ':' {
			worth = true
			break
		}
	}
	if !worth {
		return
	}
	// protocol
	type proto struct {
		end int
		out string
		w   weight
	}
	protos := []proto{{p, "", 0}}
	k := p
	pout := ""
	var pw weight
	switch {
	case m.hasPrefix(k, "https://"):
		k, pout, pw = k+8, "HTTPS colon slash slash", -wSmall
	case m.hasPrefix(k, "http://"):
		k, pout, pw = k+7, "HTTP colon slash slash", -wSmall
	case m.hasPrefix(k, "file:///"):
		k, pout, pw = k+8, "file colon slash slash slash", -wSmall
	}
	if pout != "" {
		protos = append(protos, proto{k, pout, pw})
	}
	if m.hasPrefix(k, "www.") {
		protos = append(protos, proto{k + 4, strings.TrimSpace(pout + " WWW dot"), -1000*wUnit - wSmall})
	}
	m.eIndex()
	for _, pr := range protos[1:] {
		for _, e := range m.domainEnds(pr.end) {
			d, out := m.rs[pr.end:e], pr.out
			c.addLazy(p, e, wElectronic+pr.w-weight(m.commonDomainsIn(pr.end, e))*wSmall,
				func() string { return out + " " + m.eDomain(d) })
		}
	}
	// e-mail: user@domain with a dot after the @
	if j := int(m.eEnd[p]); m.at(j) == '@' && j > p && j-p <= 256 {
		user := m.rs[p:j]
		for _, e := range m.domainEnds(j + 1) {
			d := m.rs[j+1 : e]
			if !containsRune(d, '.') {
				continue
			}
			c.addLazy(p, e, wElectronic-weight(m.commonDomainsIn(j+1, e))*wSmall,
				func() string { return m.eSpell(user) + " at " + m.eDomain(d) })
		}
	}
	// bare domain containing a common suffix
	for _, e := range m.domainEnds(p) {
		if n := m.commonDomainsIn(p, e); n > 0 {
			d := m.rs[p:e]
			c.addLazy(p, e, wElectronic-weight(n)*wSmall, func() string { return m.eDomain(d) })
		}
	}
}

// serialRule: "A-123" -> "A-one hundred twenty three", "B52" -> "B fifty
// two", "mp3" -> "mp three".
func (m *matcher) serialRule(c *cands, p int) {
	if r := m.rs[p]; !isAlpha(r) && !isDigit(r) && m.n.t.wSymbol[r] == "" {
		return
	}
	j := p
	// A serial needs letters next to a digit or symbol ("B52"), or three
	// numbers joined by delimiters ("1-2-3"), or "^2"; skip the rest cheaply.
	letters, others, delims, caret := false, false, 0, false
	for j < len(m.rs) && !isSpace(m.rs[j]) && j-p < 64 {
		switch r := m.rs[j]; {
		case isAlpha(r):
			letters = true
		case r == '-' || r == '/':
			delims++
			others = others || r == '/'
		case isDigit(r) || m.n.t.wSymbol[r] != "":
			others = true
			caret = caret || r == '^'
		}
		j++
	}
	if !(letters && others) && delims < 2 && !caret {
		return
	}
	// "x^2" -> "x squared"
	for k := p + 1; k+1 < j; k++ {
		if m.rs[k] == '^' && (m.rs[k+1] == '2' || m.rs[k+1] == '3') {
			w := " squared"
			if m.rs[k+1] == '3' {
				w = " cubed"
			}
			c.add(p, k+2, wSerial, m.str(p, k)+w)
		}
	}
	// Candidate ends: the chunk end and the last few boundaries before it
	// (a serial is usually followed by punctuation, "B52."); trying every
	// boundary would make runs like "1-1-1-..." quadratic.
	tried := 0
	for e := j; e >= p+2 && tried < 4; e-- {
		if !m.boundary(e) {
			continue
		}
		tried++
		if m.serialOK(m.rs[p:e]) {
			rs := m.rs[p:e]
			c.addLazy(p, e, wSerial, func() string { s, _ := m.serial(rs); return s })
		}
	}
}

// serialOK is serial's acceptance test without building anything: it
// runs at many positions, the reading is built only for the chosen path.
// It must agree with serial (TestSerialOK).
func (m *matcher) serialOK(rs []rune) bool {
	var kinds [3]byte  // kinds of the last three units, newest first
	var delims [3]bool // whether each had a delimiter before it
	var first, second byte
	var secondDelim rune // delimiter before the second unit, 0 if none
	n, core := 0, false
	var pending rune // delimiter seen since the last unit
	push := func(k byte) {
		kinds[2], kinds[1], kinds[0] = kinds[1], kinds[0], k
		delims[2], delims[1], delims[0] = delims[1], delims[0], pending != 0
		switch n {
		case 0:
			first = k
		case 1:
			second, secondDelim = k, pending
		}
		n++
		if n >= 2 && (kinds[1] == 'a') != (kinds[0] == 'a') {
			core = true
		}
		if n >= 3 && kinds[0] != 'a' && kinds[1] != 'a' && kinds[2] != 'a' && delims[0] && delims[1] {
			core = true
		}
		pending = 0
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case isAlpha(r):
			for i < len(rs) && isAlpha(rs[i]) {
				i++
			}
			push('a')
		case isDigit(r):
			for i < len(rs) && isDigit(rs[i]) {
				i++
			}
			push('n')
		case r == '-' || r == '/':
			if pending != 0 || n == 0 || i == len(rs)-1 {
				return false
			}
			pending = r
			i++
		default:
			if m.n.t.wSymbol[r] == "" {
				return false
			}
			push('s')
			i++
		}
	}
	if !core {
		return false
	}
	if n == 2 && first == 'a' && second == 'a' && secondDelim == '/' {
		return false
	}
	if n == 2 && first == 'n' && second == 'a' && secondDelim == 0 && len(rs) >= 3 {
		switch strings.ToLower(string(rs[len(rs)-2:])) {
		case "st", "nd", "rd", "th":
			return false
		}
	}
	return true
}

// serial reads a letters/digits/symbols chunk if upstream's serial graph
// accepts it.
func (m *matcher) serial(rs []rune) (string, bool) {
	type unit struct {
		kind  byte // 'a' letters, 'n' digits, 's' symbol
		text  string
		delim string // delimiter before this unit: "", "-", "/", " "
	}
	var units []unit
	delim := ""
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case isAlpha(r):
			j := i
			for j < len(rs) && isAlpha(rs[j]) {
				j++
			}
			units = append(units, unit{'a', string(rs[i:j]), delim})
			i = j
		case isDigit(r):
			j := i
			for j < len(rs) && isDigit(rs[j]) {
				j++
			}
			units = append(units, unit{'n', string(rs[i:j]), delim})
			i = j
		case r == '-' || r == '/':
			if delim != "" || len(units) == 0 || i == len(rs)-1 {
				return "", false
			}
			delim = string(r)
			i++
			continue
		default:
			name, ok := m.n.t.wSymbol[r]
			if !ok {
				return "", false
			}
			units = append(units, unit{'s', name, delim})
			i++
		}
		delim = ""
	}
	// The serial core: letters next to a number, or three numbers in a row.
	core := false
	for i := 1; i < len(units); i++ {
		a, b := units[i-1].kind, units[i].kind
		if a == 'a' && b != 'a' || a != 'a' && b == 'a' {
			core = true
		}
		if i >= 2 && a != 'a' && b != 'a' && units[i-2].kind != 'a' && units[i].delim != "" && units[i-1].delim != "" {
			core = true
		}
	}
	if !core {
		return "", false
	}
	// letters/letters is excluded, and so are ordinals ("21st").
	if len(units) == 2 && units[0].kind == 'a' && units[1].kind == 'a' && units[1].delim == "/" {
		return "", false
	}
	if len(units) == 2 && units[0].kind == 'n' && units[1].kind == 'a' && units[1].delim == "" {
		switch strings.ToLower(units[1].text) {
		case "st", "nd", "rd", "th":
			return "", false
		}
	}
	var b strings.Builder
	for i, u := range units {
		if i > 0 {
			if u.delim != "" {
				b.WriteString(u.delim)
			} else {
				b.WriteByte(' ')
			}
		}
		switch u.kind {
		case 'n':
			switch {
			case len(u.text) >= 6 || len(u.text) > 1 && u.text[0] == '0':
				b.WriteString(m.n.singleDigits(u.text))
			default:
				g, _ := m.names(u.text)
				b.WriteString(g)
			}
		default:
			b.WriteString(u.text)
		}
	}
	return b.String(), true
}
