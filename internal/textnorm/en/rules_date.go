package en

import "strings"

const (
	wStructured = -wUnit / 10 // date: mdy | dmy | ymd
	wNumericYMD = -wUnit      // date: year with numeric month and day
)

// ties is get_ties_graph for two digits: "12" -> "twelve", "20" ->
// "twenty", "05" -> "oh five".
func (n *Normalizer) ties(d string) (string, bool) {
	switch {
	case d[0] == '0':
		if d[1] == '0' {
			return "", false
		}
		return "oh " + n.t.digit[d[1:]], true
	case d[0] == '1':
		return n.t.teen[d], true
	case d[1] == '0':
		return n.t.ty[d[:1]], true
	}
	return n.t.ty[d[:1]] + " " + n.t.digit[d[1:]], true
}

// year4 is get_four_digit_year_graph for "dddd" (plus an "s" suffix when
// plural): "1219" -> "twelve nineteen", "1900" -> "nineteen hundred",
// "2005" -> "two thousand five", "1970s" -> "nineteen seventies".
// Where upstream's non-deterministic graph has equal-weight readings
// ("twenty hundred" / "two thousand") this takes the thousand form, which
// is what its deterministic graph prefers.
func (n *Normalizer) year4(d string, plural bool) (string, bool) {
	if len(d) != 4 || !allDigits(d) {
		return "", false
	}
	if plural {
		switch {
		case d[1:] == "000" && d[0] != '0':
			return n.t.digit[d[:1]] + " thousands", true
		case d[2:] == "00":
			if h, ok := n.ties(d[:2]); ok {
				return h + " hundreds", true
			}
		case d[0] == '1' && d[3] == '0' && d[2] != '0':
			s := n.t.teen[d[:2]] + " " + n.t.ty[d[2:3]]
			return strings.TrimSuffix(s, "y") + "ies", true
		case d[0] == '1' && d[2:] == "10":
			return n.t.teen[d[:2]] + " tens", true
		}
		return "", false
	}
	if d[0] != '0' && d[1] == '0' && d[2] == '0' {
		s := n.t.digit[d[:1]] + " thousand"
		if d[3] != '0' {
			s += " " + n.t.digit[d[3:]]
		}
		return s, true
	}
	h, ok := n.ties(d[:2])
	if !ok {
		return "", false
	}
	if d[2:] == "00" {
		return h + " hundred", true
	}
	l, ok := n.ties(d[2:])
	if !ok {
		return "", false
	}
	return h + " " + l, true
}

// years lists year_graph readings at i: 1000-2999 (optionally plural),
// "'70s", and years with an era suffix ("2024 B.C", "123 AD").
func (m *matcher) years(i int) []span {
	if !isDigit(m.at(i)) && m.at(i) != '\'' {
		return nil
	}
	return m.memo(memoYears, i, m.yearsAt)
}

func (m *matcher) yearsAt(i int) []span {
	var out []span
	j := m.digitRun(i)
	if j-i == 4 && (m.rs[i] == '1' || m.rs[i] == '2') {
		d := m.str(i, j)
		if s, ok := m.n.year4(d, false); ok {
			out = append(out, span{j, s})
		}
		for _, k := range []int{j, j + 1} {
			if k == j+1 && m.at(j) != ' ' {
				continue
			}
			if m.at(k) == 's' {
				if s, ok := m.n.year4(d, true); ok {
					out = append(out, span{k + 1, s})
				}
			}
		}
	}
	// '70s -> seventies
	k := i
	if m.at(k) == '\'' {
		k++
	}
	if isDigit(m.at(k)) && m.at(k) != '0' && m.at(k) != '1' && m.at(k+1) == '0' && m.at(k+2) == 's' {
		out = append(out, span{k + 3, strings.TrimSuffix(m.n.t.ty[string(m.rs[k])], "y") + "ies"})
	}
	// year with suffix
	if j > i {
		d := m.str(i, j)
		var base string
		switch len(d) {
		case 4:
			base, _ = m.n.year4(d, false)
		case 3:
			a, ok1 := m.names(d[:1])
			b, ok2 := m.names(d[1:])
			if ok1 && ok2 && d[0] != '0' {
				base = a + " " + b
			}
		}
		if base != "" {
			k := m.spaceRun(j)
			m.n.t.yearSuffix.match(m.rs, k, func(e int, v string) {
				out = append(out, span{e, base + " " + v})
			})
		}
	}
	return out
}

// days lists day_graph readings: "5", "05", "5th", "the 5th" -> "fifth".
func (m *matcher) days(i int) []span {
	var out []span
	for _, k := range []int{i, i + 4} {
		if k == i+4 && !m.hasPrefix(i, "the ") {
			continue
		}
		j := m.digitRun(k)
		if j == k || j-k > 2 {
			continue
		}
		d := m.str(k, j)
		if len(d) == 2 && d[0] == '0' {
			d = d[1:]
		}
		if len(d) == 2 && !(d[0] == '1' || d[0] == '2' || d == "30" || d == "31") {
			continue
		}
		s, ok := m.names(d)
		if !ok {
			continue
		}
		s = m.n.ordinalize(s)
		out = append(out, span{j, s})
		for _, suf := range []string{"rd", "th", "st", "nd", "RD", "TH", "ST", "ND"} {
			if m.hasPrefix(j, suf) {
				out = append(out, span{j + 2, s})
			}
		}
	}
	return out
}

// months lists month names/abbreviations at i, each optionally followed by
// one deleted ASCII punctuation mark ("jan." -> "january").
func (m *matcher) months(i int) []span {
	var out []span
	m.n.t.monthName.match(m.rs, i, func(e int, name string) {
		if isAlpha(m.at(e)) {
			return // the whole word must be the month
		}
		out = append(out, span{e, name})
		if r := m.at(e); r < 0x80 && r > ' ' && !isDigit(r) {
			out = append(out, span{e + 1, name})
		}
	})
	return out
}

// monthNumbers matches "1".."12" and "01".."12".
func (m *matcher) monthNumbers(i int) []span {
	var out []span
	j := m.digitRun(i)
	if j-i >= 1 {
		if name := m.n.t.monthByNumber(m.rs[i], 0); name != "" {
			out = append(out, span{i + 1, name})
		}
	}
	if j-i >= 2 {
		if name := m.n.t.monthByNumber(m.rs[i], m.rs[i+1]); name != "" {
			out = append(out, span{i + 2, name})
		}
	}
	return out
}

// monthByNumber looks up date/month_number.tsv ("1".."12", "01".."12")
// without building a string; b is 0 for a one-digit number.
func (t *tables) monthByNumber(a, b rune) string {
	if a < '0' || a > '9' {
		return ""
	}
	if b == 0 {
		return t.monthNumber1[a-'0']
	}
	if b < '0' || b > '9' {
		return ""
	}
	return t.monthNumber2[(a-'0')*10+b-'0']
}

// yearsAfter is year_after_graph: " 2012" or ", 2012" (then an optional
// deleted comma); the reading keeps the comma: ", twenty twelve".
func (m *matcher) yearsAfter(i int) []span {
	var out []span
	addYears := func(k int, prefix string) {
		for _, y := range m.years(k) {
			out = append(out, span{y.end, prefix + y.out})
			if m.at(y.end) == ',' {
				out = append(out, span{y.end + 1, prefix + y.out})
			}
		}
	}
	if m.at(i) == ' ' {
		addYears(i+1, " ")
	}
	if m.at(i) == ',' {
		for _, k := range m.optSpace(i + 1) {
			addYears(k, ", ")
		}
	}
	return out
}

// dateRule: "jan. 5, 2012" -> "the fifth of january, twenty twelve".
func (m *matcher) dateRule(c *cands, p int) {
	add := func(end int, w weight, day, month, year string) {
		if !m.boundary(end) {
			return // checked before building the reading
		}
		s := month
		if day != "" {
			s = "the " + day + " of " + month
		}
		if year != "" {
			if strings.HasPrefix(year, ",") {
				s += year
			} else {
				s += " " + strings.TrimPrefix(year, " ")
			}
		}
		c.add(p, end, wDate+w, s)
	}
	r := m.at(p)
	if isDigit(r) || r == '\'' {
		for _, y := range m.years(p) {
			c.add(p, y.end, wDate, y.out)
		}
	}
	if isAlpha(r) {
		for _, mo := range m.months(p) {
			// month + year
			for _, y := range m.yearsAfter(mo.end) {
				add(y.end, wStructured, "", mo.out, y.out)
			}
			// month + spaces + day (+ year)
			if k := m.spaceRun(mo.end); k > mo.end {
				for _, d := range m.days(k) {
					add(d.end, wStructured, d.out, mo.out, "")
					for _, y := range m.yearsAfter(d.end) {
						add(y.end, wStructured, d.out, mo.out, y.out)
					}
				}
			}
			// month-day(-year)
			if m.at(mo.end) == '-' {
				for _, d := range m.days(mo.end + 1) {
					add(d.end, wStructured, d.out, mo.out, "")
					if m.at(d.end) == '-' {
						for _, y := range m.years(d.end + 1) {
							add(y.end, wStructured, d.out, mo.out, y.out)
						}
					}
				}
			}
		}
	}
	if !isDigit(r) && !m.hasPrefix(p, "the ") {
		m.fiscal(c, p)
		return
	}
	// month-number/day/year with one separator kind
	for _, mo := range m.monthNumbers(p) {
		sep := m.at(mo.end)
		if sep != '-' && sep != '/' && sep != '.' {
			continue
		}
		{
			for _, d := range m.days(mo.end + 1) {
				if m.at(d.end) != sep {
					continue
				}
				for _, y := range m.years(d.end + 1) {
					add(y.end, wStructured+wNumericYMD, d.out, mo.out, y.out)
				}
			}
		}
	}
	// day month (year)
	for _, d := range m.days(p) {
		if k := m.spaceRun(d.end); k > d.end {
			for _, mo := range m.months(k) {
				add(mo.end, wStructured, d.out, mo.out, "")
				for _, y := range m.yearsAfter(mo.end) {
					add(y.end, wStructured, d.out, mo.out, y.out)
				}
			}
		}
		// dd-mm-yyyy where dd cannot be a month
		if d.end-p == 2 && isDigit(m.at(p+1)) {
			if m.n.t.monthByNumber(m.rs[p], m.rs[p+1]) != "" {
				continue
			}
			for _, sep := range []rune{'-', '/', '.'} {
				if m.at(d.end) != sep {
					continue
				}
				for _, mo := range m.monthNumbers(d.end + 1) {
					if m.at(mo.end) != sep {
						continue
					}
					for _, y := range m.years(mo.end + 1) {
						add(y.end, wStructured+wNumericYMD, d.out, mo.out, y.out)
					}
				}
			}
		}
	}
	// year month day
	for _, y := range m.years(p) {
		if k := m.spaceRun(y.end); k > y.end {
			for _, mo := range m.months(k) {
				if k2 := m.spaceRun(mo.end); k2 > mo.end {
					for _, d := range m.days(k2) {
						add(d.end, wStructured, d.out, mo.out, y.out)
					}
				}
			}
		}
		for _, sep := range []rune{'-', '/', '.'} {
			if m.at(y.end) != sep {
				continue
			}
			for _, mo := range m.monthNumbers(y.end + 1) {
				if m.at(mo.end) != sep {
					continue
				}
				for _, d := range m.days(mo.end + 1) {
					add(d.end, wStructured+wNumericYMD, d.out, mo.out, y.out)
				}
			}
		}
	}
	m.fiscal(c, p)
}

// fiscal: "1H23" -> "the first half of twenty three", "3Q22" -> "the
// third quarter of twenty two".
func (m *matcher) fiscal(c *cands, p int) {
	o, ok := fiscalOrdinals[m.at(p)]
	if !ok {
		return
	}
	var period string
	switch m.at(p + 1) {
	case 'H':
		if m.at(p) > '2' {
			return
		}
		period = o + " half"
	case 'Q':
		period = o + " quarter"
	default:
		return
	}
	i := p + 2
	if m.digitRun(i) < i+2 {
		return
	}
	d := m.str(i, i+2)
	y, ok := m.names(d)
	if !ok {
		y = m.n.singleDigits(d)
	}
	s := "the " + period + " of " + y
	c.add(p, i+2, wDate, s)
	if m.at(i+2) == ',' {
		c.add(p, i+3, wDate, s)
	}
}

// clock lists time readings at i (the time rule's graph, also used by
// ranges): "12:30 a.m. est" -> "twelve thirty AM EST".
func (m *matcher) clock(i int) []span {
	if !isDigit(m.at(i)) {
		return nil
	}
	return m.memo(memoClock, i, m.clockAt)
}

func (m *matcher) clockAt(i int) []span {
	var out []span
	type hm struct {
		end int
		out string
	}
	var hours []hm
	j := m.digitRun(i)
	if j-i >= 1 {
		if d := m.str(i, i+1); true {
			hours = append(hours, hm{i + 1, m.n.t.digitOrZero(d)})
		}
	}
	if j-i >= 2 {
		d := m.str(i, i+2)
		switch {
		case d[0] == '0':
			hours = append(hours, hm{i + 2, m.n.t.digitOrZero(d[1:])})
		case d <= "23":
			s, _ := m.names(d)
			hours = append(hours, hm{i + 2, s})
		}
	}
	minute := func(k int) (end int, spoken string, zero bool, ok bool) {
		if m.digitRun(k)-k < 2 {
			return 0, "", false, false
		}
		d := m.str(k, k+2)
		switch {
		case d == "00":
			return k + 2, "zero", true, true
		case d[0] == '0':
			return k + 2, "o " + m.n.t.digit[d[1:]], false, true
		case d < "60":
			s, _ := m.names(d)
			return k + 2, s, false, true
		}
		return 0, "", false, false
	}
	suffixes := func(k int, f func(end int, s string)) {
		k = m.spaceRun(k)
		m.n.t.timeSuffix.match(m.rs, k, f)
	}
	zones := func(k int, f func(end int, s string)) {
		f(k, "")
		k2 := m.spaceRun(k)
		m.n.t.timeZone.match(m.rs, k2, func(e int, z string) { f(e, " "+z) })
	}
	for _, h := range hours {
		if m.at(h.end) == ':' {
			if me, ms, zero, ok := minute(h.end + 1); ok {
				// h:mm (suffix) (zone)
				zones(me, func(e int, z string) {
					if zero {
						out = append(out, span{e, h.out + " o'clock" + z})
					} else {
						out = append(out, span{e, h.out + " " + ms + z})
					}
				})
				suffixes(me, func(se int, sfx string) {
					zones(se, func(e int, z string) {
						if zero {
							out = append(out, span{e, h.out + " " + sfx + z})
						} else {
							out = append(out, span{e, h.out + " " + ms + " " + sfx + z})
						}
					})
				})
				// h:mm:ss
				if m.at(me) == ':' {
					if se, ss, _, ok := minute(me + 1); ok {
						base := hmsText(h.out, ms, ss)
						zones(se, func(e int, z string) { out = append(out, span{e, base + z}) })
						suffixes(se, func(e2 int, sfx string) {
							zones(e2, func(e int, z string) { out = append(out, span{e, base + " " + sfx + z}) })
						})
					}
				}
			}
		}
		if m.at(h.end) == '.' {
			if me, ms, zero, ok := minute(h.end + 1); ok {
				suffixes(me, func(se int, sfx string) {
					zones(se, func(e int, z string) {
						if zero {
							out = append(out, span{e, h.out + " " + sfx + z})
						} else {
							out = append(out, span{e, h.out + " " + ms + " " + sfx + z})
						}
					})
				})
			}
		}
		suffixes(h.end, func(se int, sfx string) {
			zones(se, func(e int, z string) { out = append(out, span{e, h.out + " " + sfx + z}) })
		})
	}
	return out
}

// hmsText reads h:mm:ss: "ten hours zero minutes and five seconds".
func hmsText(h, mm, ss string) string {
	s := h + " hours " + mm + " minutes and " + ss + " seconds"
	words := strings.Split(s, " ")
	var keep []string
	for i := 0; i < len(words); i++ {
		if words[i] == "o" && i+1 < len(words) {
			continue // "o five" -> "five"
		}
		if words[i] == "one" && i+1 < len(words) {
			switch words[i+1] {
			case "hours", "minutes", "seconds":
				keep = append(keep, "one", strings.TrimSuffix(words[i+1], "s"))
				i++
				continue
			}
		}
		keep = append(keep, words[i])
	}
	return strings.Join(keep, " ")
}

func (t *tables) digitOrZero(d string) string {
	if d == "0" {
		return "zero"
	}
	return t.digit[d]
}

// timeRule: "2:00" -> "two o'clock", "2.30 a.m." -> "two thirty AM".
func (m *matcher) timeRule(c *cands, p int) {
	for _, s := range m.clock(p) {
		c.add(p, s.end, wTime, s.out)
	}
}

var fiscalOrdinals = map[rune]string{'1': "first", '2': "second", '3': "third", '4': "fourth"}
