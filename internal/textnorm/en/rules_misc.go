package en

import "strings"

// wordRule: any run of letters and symbols no other rule reads, kept as is.
func (m *matcher) wordRule(c *cands, p int) {
	j := p
	for j < len(m.rs) && m.n.isWordChar(m.rs[j]) {
		j++
	}
	c.put(p, j, wWord, "", nil)
	if t := c.last(); t != nil && t.end == j && t.w == wWord {
		t.raw = true
	}
}

// whitelistRule: "Mt." -> "Mount", "World War II" -> "World War two",
// "U.S.A." -> "USA", "Stroudsburg, PA" -> "Stroudsburg, Pennsylvania".
func (m *matcher) whitelistRule(c *cands, p int) {
	m.n.t.whitelist.match(m.rs, p, func(e int, v string) { c.add(p, e, wWhitelist, v) })
	if isUpper(m.at(p)) {
		for _, sep := range []string{".", ". "} {
			letters := []rune{m.rs[p]}
			k := p + 1
			for m.hasPrefix(k, sep) && isUpper(m.at(k+len(sep))) {
				k += len(sep)
				letters = append(letters, m.rs[k])
				k++
				if len(letters) >= 3 {
					c.add(p, k, wWhitelist, string(letters))
					if m.at(k) == '.' {
						c.add(p, k+1, wWhitelist, string(letters))
					}
				}
			}
		}
	}
	if isAlpha(m.at(p)) {
		j := p
		for j < len(m.rs) && isAlpha(m.rs[j]) {
			j++
		}
		if m.at(j) == ',' {
			for _, k := range []int{j + 1, j + 2} {
				if k == j+2 && m.at(j+1) != ' ' {
					continue
				}
				e := k
				for e < len(m.rs) && (isUpper(m.rs[e]) || m.rs[e] == '.') && e-k < 6 {
					e++
				}
				for ; e > k; e-- {
					if name, ok := m.n.t.stateName[m.str(k, e)]; ok {
						c.add(p, e, wWhitelist, m.str(p, k)+name)
					}
				}
			}
		}
	}
}

// telephoneRule: "+1 123-123-5678-1" -> "plus one, one two three, one two
// three, five six seven eight, one"; also IP addresses and SSNs.
func (m *matcher) telephoneRule(c *cands, p int) {
	// Cheap filter: a phone number has at least ten digits or letters
	// within a few spaces; an IP or SSN starts with a digit.
	alnum, spaces := 0, 0
	for j := p; j < len(m.rs) && j-p < 40 && spaces < 6; j++ {
		if r := m.rs[j]; isDigit(r) || isAlpha(r) {
			alnum++
		} else if isSpace(r) {
			spaces++
		}
	}
	if alnum < 10 {
		if isDigit(m.at(p)) {
			m.ipAndSSN(c, p, m.phoneDigit)
		}
		return
	}
	digit := m.phoneDigit
	// number_part: area code then seven digits/letters.
	numberPart := func(i int) []span {
		var out []span
		var area string
		var k int
		open := m.at(i) == '('
		j := i
		if open {
			j++
		}
		if m.digitRun(j)-j < 3 {
			return nil
		}
		ad := m.str(j, j+3)
		if ad == "800" {
			area = "eight hundred"
		} else {
			area = digit(rune(ad[0])) + " " + digit(rune(ad[1])) + " " + digit(rune(ad[2]))
		}
		k = j + 3
		var starts []int
		if open {
			switch {
			case m.hasPrefix(k, ")-"):
				starts = append(starts, k+2)
			case m.at(k) == ')':
				starts = append(starts, k+1)
				if m.at(k+1) == ' ' {
					starts = append(starts, k+2)
				}
			}
		} else if m.at(k) == '-' || m.at(k) == '.' {
			starts = append(starts, k+1)
		}
		for _, s := range starts {
			for _, dotStyle := range []bool{false, true} {
				var b strings.Builder
				b.WriteString(area + ", ")
				e, count := s, 0
				for count < 7 && e < len(m.rs) {
					r := m.rs[e]
					if isDigit(r) {
						b.WriteString(digit(r))
						e++
						count++
						if sepAt := m.at(e); (!dotStyle && sepAt == '-') || (dotStyle && sepAt == '.') {
							b.WriteString(", ")
							e++
						} else if sepAt == ' ' || sepAt == '-' || sepAt == '.' {
							// a separator the number_words graph cannot read
							break
						} else {
							b.WriteString(" ")
						}
						continue
					}
					if isAlpha(r) {
						b.WriteRune(r)
						e++
						count++
						if sepAt := m.at(e); (!dotStyle && sepAt == '-') || (dotStyle && sepAt == '.') {
							b.WriteString(" ")
							e++
						}
						continue
					}
					break
				}
				if count == 7 {
					out = append(out, span{e, strings.TrimRight(strings.TrimSuffix(b.String(), " "), " ")})
				}
			}
		}
		return out
	}
	extension := func(i int) []span {
		var out []span
		j := m.digitRun(i)
		for e := i + 1; e <= j && e-i <= 4; e++ {
			var parts []string
			for _, r := range m.rs[i:e] {
				parts = append(parts, digit(r))
			}
			out = append(out, span{e, strings.Join(parts, " ")})
		}
		return out
	}
	// country code: (prompt spaces)? "+"? 1-3 digits, then "-"? spaces.
	type cc struct {
		end        int
		prefix     string // prompt, already with its trailing space
		plus       bool
		from, upto int // the code digits; empty for a bare prompt
	}
	codeText := func(c cc) string {
		if c.from == c.upto {
			return c.prefix
		}
		var b strings.Builder
		b.WriteString(c.prefix)
		if c.plus {
			b.WriteString("plus ")
		}
		for i, r := range m.rs[c.from:c.upto] {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(digit(r))
		}
		b.WriteByte(',')
		return b.String()
	}
	var codes []cc
	tryCode := func(i int, prefix string) {
		k := i
		plus := m.at(k) == '+'
		if plus {
			k++
		}
		j := m.digitRun(k)
		for e := k + 1; e <= j && e-k <= 3; e++ {
			end := e
			if m.at(end) == '-' {
				end++
			}
			end = m.spaceRun(end)
			// number_part starts with an area code: "(ddd" or "ddd"
			if a := end + b2i(m.at(end) == '('); m.digitRun(a)-a < 3 {
				continue
			}
			codes = append(codes, cc{end: end, prefix: prefix, plus: plus, from: k, upto: e})
		}
	}
	tryCode(p, "")
	m.n.t.phonePrompt.match(m.rs, p, func(e int, v string) {
		if k := m.spaceRun(e); k > e {
			tryCode(k, v+" ")
			codes = append(codes, cc{end: k, prefix: v})
		}
	})
	// priority: number+ext, code+number+ext, code+number, number.
	var found []span
	for _, np := range numberPart(p) {
		found = append(found, np)
		if m.at(np.end) != ' ' {
			for _, x := range extension(np.end) {
				found = append(found, span{x.end, np.out + " " + x.out})
			}
		}
	}
	for _, code := range codes {
		nps := numberPart(code.end)
		if len(nps) == 0 {
			continue
		}
		ct := codeText(code)
		for _, np := range nps {
			found = append(found, span{np.end, ct + " " + np.out})
			for _, x := range extension(np.end) {
				found = append(found, span{x.end, ct + " " + np.out + " " + x.out})
			}
		}
	}
	for _, f := range found {
		c.add(p, f.end, wTelephone, f.out)
	}
	m.ipAndSSN(c, p, digit)
}

// phoneDigit reads one digit; "0" is "zero" (upstream's non-deterministic
// "o" and "oh" readings tie with it).
func (m *matcher) phoneDigit(r rune) string {
	if r == '0' {
		return "zero"
	}
	return m.n.t.digit[string(r)]
}

// ipAndSSN: "192.168.0.1" -> "one nine two dot ...", "123-45-6789".
func (m *matcher) ipAndSSN(c *cands, p int, digit func(rune) string) {
	spell := func(i, j int) string {
		var parts []string
		for _, r := range m.rs[i:j] {
			parts = append(parts, digit(r))
		}
		return strings.Join(parts, " ")
	}
	type pre struct {
		at  int
		out string
	}
	starts := []pre{{p, ""}}
	for _, tr := range []*trie{m.n.t.ipPrompt, m.n.t.ssnPrompt} {
		tr.match(m.rs, p, func(e int, v string) {
			if k := m.spaceRun(e); k > e {
				starts = append(starts, pre{k, v + " "})
			}
		})
	}
	for _, s := range starts {
		// IP: four groups of 1-3 digits
		k := s.at
		var groups []string
		ok := true
		for g := 0; g < 4 && ok; g++ {
			if g > 0 {
				if m.at(k) != '.' {
					ok = false
					break
				}
				k++
			}
			j := m.digitRun(k)
			if j == k || j-k > 3 {
				ok = false
				break
			}
			groups = append(groups, spell(k, j))
			k = j
		}
		if ok {
			c.add(p, k, wTelephone, s.out+strings.Join(groups, " dot "))
		}
		// SSN: ddd-dd-dddd
		k = s.at
		if m.digitRun(k) == k+3 && m.at(k+3) == '-' && m.digitRun(k+4) == k+6 && m.at(k+6) == '-' && m.digitRun(k+7) == k+11 {
			c.add(p, k+11, wTelephone, s.out+spell(k, k+3)+", "+spell(k+4, k+6)+", "+spell(k+7, k+11))
		}
	}
}

// rangeRule: "2-3" -> "two to three", "Mon.-Sun." -> "Monday to Sunday",
// "1990-95" -> "nineteen ninety to ninety five".
func (m *matcher) rangeRule(c *cands, p int) {
	add := func(end int, w weight, s string) { c.add(p, end, wRange+w, s) }
	// weeks
	m.n.t.week.match(m.rs, p, func(e int, a string) {
		for _, k := range m.optSpace(e) {
			for _, sep := range []struct{ in, out string }{{"-", " to "}, {"~", "approximately"}} {
				if !m.hasPrefix(k, sep.in) {
					continue
				}
				for _, k2 := range m.optSpace(k + 1) {
					m.n.t.week.match(m.rs, k2, func(e2 int, b string) { add(e2, 0, a+sep.out+b) })
				}
			}
		}
	})
	r := m.at(p)
	if r == '~' {
		for _, t := range m.clock(p + 1) {
			add(t.end, 0, "approximately"+t.out)
		}
		for _, x := range m.numbers(p + 1) {
			if s, w, ok := m.graphWithAnd(x.digits); ok {
				add(x.end, w, "approximately"+s)
			}
		}
		return
	}
	if m.hasPrefix(p, "mid-") {
		for _, y := range m.rangeYears(p + 4) {
			add(y.end, 0, "mid "+y.out)
		}
	}
	for _, no := range []struct{ in, out string }{{"NO", "Number"}, {"No", "Number"}, {"no", "number"}} {
		if !m.hasPrefix(p, no.in) {
			continue
		}
		k := p + 2
		for _, sep := range []string{"", " ", ". "} {
			if !m.hasPrefix(k, sep) {
				continue
			}
			for _, x := range m.numbers(k + len(sep)) {
				if s, w, ok := m.graphWithAnd(x.digits); ok {
					add(x.end, w, no.out+sep+s)
				}
			}
		}
	}
	if !isDigit(r) {
		return
	}
	// time - time
	for _, t := range m.clock(p) {
		for _, k := range m.optSpace(t.end) {
			if m.at(k) != '-' {
				continue
			}
			for _, k2 := range m.optSpace(k + 1) {
				for _, t2 := range m.clock(k2) {
					add(t2.end, 0, t.out+" to "+t2.out)
				}
			}
		}
	}
	// year - year
	for _, y := range m.rangeYears(p) {
		if y.end-p < 4 {
			continue
		}
		for _, k := range m.optSpace(y.end) {
			if m.at(k) != '-' {
				continue
			}
			for _, k2 := range m.optSpace(k + 1) {
				for _, y2 := range m.rangeYears(k2) {
					add(y2.end, 0, y.out+" to "+y2.out)
				}
				if m.digitRun(k2) == k2+2 {
					if s, w, ok := m.graphWithAnd(m.str(k2, k2+2)); ok {
						add(k2+2, w, y.out+" to "+s)
					}
				}
			}
		}
	}
	// cardinal ranges
	type card struct {
		end int
		w   weight
		out string
	}
	cardsAt := func(i int) []card {
		var out []card
		for _, x := range m.numbers(i) {
			if s, w, ok := m.graphWithAnd(x.digits); ok {
				out = append(out, card{x.end, w, s})
			}
		}
		return out
	}
	firsts := cardsAt(p)
	for _, a := range firsts {
		// repeated operators: + * /
		for _, op := range []struct{ in, out string }{
			{"+", " plus "}, {" + ", " plus "}, {"*", " times "}, {" * ", " times "}, {"/", " divided by "}, {" / ", " divided by "},
		} {
			if !m.hasPrefix(a.end, op.in) {
				continue
			}
			cur := []card{a}
			for len(cur) > 0 {
				var next []card
				for _, x := range cur {
					if !m.hasPrefix(x.end, op.in) {
						continue
					}
					for _, b := range cardsAt(x.end + len(op.in)) {
						y := card{b.end, x.w + b.w, x.out + op.out + b.out}
						add(y.end, y.w, y.out)
						next = append(next, y)
					}
				}
				cur = next
			}
		}
		for _, sep := range []struct {
			in, out string
			w       weight
			spaces  bool
		}{
			{"-", " to ", 0, true}, {"-", " minus ", wSmall, true}, {":", " to ", 0, true},
			{"...", " ... ", 0, false}, {" ... ", " ... ", 0, false},
			{" x ", " by ", 0, false}, {"x", " by ", 0, false},
		} {
			ks := []int{a.end}
			if sep.spaces {
				ks = m.optSpace(a.end)
			}
			for _, k := range ks {
				if !m.hasPrefix(k, sep.in) {
					continue
				}
				k2s := []int{k + len(sep.in)}
				if sep.spaces {
					k2s = m.optSpace(k + len(sep.in))
				}
				for _, k2 := range k2s {
					for _, b := range cardsAt(k2) {
						add(b.end, a.w+b.w+sep.w, a.out+sep.out+b.out)
					}
				}
			}
		}
		for _, x := range []string{"x", " x"} {
			if m.hasPrefix(a.end, x) {
				add(a.end+len(x), a.w, a.out+" times")
			}
		}
	}
}

// rangeYears lists date readings of "dddd", "dddds", "dds" for ranges.
func (m *matcher) rangeYears(i int) []span {
	var out []span
	j := m.digitRun(i)
	if j-i == 4 || j-i == 2 {
		for _, y := range m.years(i) {
			if y.end == j || (y.end == j+1 && m.at(j) == 's') {
				out = append(out, y)
			}
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
