package zh

import "strings"

// Rule weights, in hundredths, as in WeTextProcessing's
// tn/chinese/normalizer.py: a path through the input costs the sum of its
// tokens' weights and the cheapest path wins. Integers keep ties exact.
const (
	wDate      = 102
	wWhitelist = 103
	wSport     = 104
	wFraction  = 105
	wMeasure   = 105
	wMoney     = 105
	wTime      = 105
	wCardinal  = 106
	wMath      = 9000
	wChar      = 10000

	wErhua    = 10   // whitelist: a bare 儿 (add_weight 0.1)
	wUnitMult = 10   // measure: k/w before a unit (add_weight 0.1)
	wPhone    = -100 // cardinal: phone numbers (add_weight -1.0)
)

// sink receives a rule's candidate tokens starting at one position.
type sink interface {
	// want reports whether a token ending at end with weight w could be
	// chosen, so that its spoken form is worth building.
	want(end, w int) bool
	// put offers a token.
	put(end, w int, out string)
}

// rule is one tagger of the union; it offers every token it can read at i.
type rule func(p *parser, i int, s sink)

// rules is the tagger union in upstream order; among equal-cost tokens the
// one offered first wins. The char rule (any one character, weight 100) comes
// last and is applied by the parse loop itself, which needs no string for it.
var rules = []rule{
	(*parser).date,
	(*parser).whitelist,
	(*parser).sport,
	(*parser).fraction,
	(*parser).measure,
	(*parser).money,
	(*parser).time,
	(*parser).cardinal,
	(*parser).math,
}

// match calls fn for every key of t that starts at i.
func (p *parser) match(t *trie, i int, fn func(end int, out string)) {
	if i < len(p.r) && p.first[i]&t.bit != 0 {
		t.match(p.r, i, fn)
	}
}

func (p *parser) at(i int) rune {
	if i < len(p.r) {
		return p.r[i]
	}
	return -1
}

// skipSpace deletes one optional ASCII space (rmspace = delete(" ").ques)
// before something that cannot start with a space.
func (p *parser) skipSpace(i int) int {
	if p.at(i) == ' ' {
		return i + 1
	}
	return i
}

func (p *parser) numString(n num, exactTwo bool) string {
	var b strings.Builder
	p.writeNum(&b, n, exactTwo)
	return b.String()
}

func (p *parser) digitsString(i, j int) string {
	var b strings.Builder
	for q := i; q < j; q++ {
		switch c := p.r[q]; {
		case isDigit(c):
			b.WriteString(p.digitName(c))
		case c == '.':
			b.WriteString(p.t.dot[c])
		}
	}
	return b.String()
}

// ---- date ----

// year reads yyyy: a nonzero digit and three digits, then 年.
func (p *parser) year(i int) (string, bool) {
	if i+4 > len(p.r) {
		return "", false
	}
	if !isDigit(p.r[i]) || digitValue(p.r[i]) == 0 { // digit.tsv: 1–9
		return "", false
	}
	for q := i + 1; q < i+4; q++ {
		if !isDigit(p.r[q]) {
			return "", false
		}
	}
	return p.digitsString(i, i+4) + "年", true
}

func isDateSep(c rune) bool { return c == '/' || c == '-' || c == '.' }

// dateToken offers one date token: yyyy/m/d, dd/mm/yyyy, yyyy/mm, mm/yyyy,
// mm/dd (separators / - .), read year, month, day.
func (p *parser) dateToken(i int, fn func(end int, out string)) {
	if y, ok := p.year(i); ok && isDateSep(p.at(i+4)) {
		p.match(p.t.month, i+5, func(me int, m string) {
			if isDateSep(p.at(me)) {
				p.match(p.t.day, me+1, func(de int, d string) { fn(de, y+m+d) })
			}
		})
		p.match(p.t.monthMM, i+5, func(me int, m string) { fn(me, y+m) })
	}
	p.match(p.t.day, i, func(de int, d string) {
		if !isDateSep(p.at(de)) {
			return
		}
		p.match(p.t.month, de+1, func(me int, m string) {
			if isDateSep(p.at(me)) {
				if y, ok := p.year(me + 1); ok {
					fn(me+5, y+m+d)
				}
			}
		})
	})
	p.match(p.t.monthMM, i, func(me int, m string) {
		if !isDateSep(p.at(me)) {
			return
		}
		if y, ok := p.year(me + 1); ok {
			fn(me+5, y+m)
		}
		p.match(p.t.day, me+1, func(de int, d string) { fn(de, m+d) })
	})
}

func (p *parser) date(i int, s sink) {
	p.dateToken(i, func(e int, a string) {
		s.put(e, wDate, a)
		if c := p.at(e); c == '-' || c == '~' {
			p.dateToken(e+1, func(e2 int, b string) { s.put(e2, wDate, a+"到"+b) })
		}
	})
}

// ---- whitelist ----

func (p *parser) whitelist(i int, s sink) {
	p.match(p.t.whitelist, i, func(e int, out string) { s.put(e, wWhitelist, out) })
	if p.r[i] == '儿' {
		out := "儿"
		if p.opt.RemoveErhua {
			out = ""
		}
		s.put(i+1, wWhitelist+wErhua, out)
	}
}

// ---- sport ----

func isScoreSep(c rune) bool { return c == '/' || c == '-' || c == ':' }

func (p *parser) sport(i int, s sink) {
	p.match(p.t.team, i, func(te int, team string) {
		for _, a := range p.nums(p.skipSpace(te), false) {
			if !isScoreSep(p.at(a.end)) {
				continue
			}
			for _, b := range p.nums(a.end+1, false) {
				ends := [2]int{b.end, -1}
				if p.at(b.end) == ' ' {
					ends[1] = b.end + 1
				}
				for _, e := range ends {
					if e >= 0 && s.want(e, wSport) {
						s.put(e, wSport, team+p.numString(a, false)+"比"+p.numString(b, false))
					}
				}
			}
		}
	})
}

// ---- fraction ----

func (p *parser) fraction(i int, s sink) {
	for _, a := range p.nums(i, false) {
		q := p.skipSpace(a.end)
		if p.at(q) != '/' {
			continue
		}
		for _, b := range p.nums(p.skipSpace(q+1), false) {
			if s.want(b.end, wFraction) {
				s.put(b.end, wFraction, p.numString(b, false)+"分之"+p.numString(a, false))
			}
		}
	}
}

// ---- measure ----

// units offers measure units at i, optionally after k (千) or w (万).
func (p *parser) units(i int, fn func(end, w int, out string)) {
	p.match(p.t.units, i, func(e int, u string) { fn(e, 0, u) })
	var mult string
	switch p.at(i) {
	case 'k':
		mult = "千"
	case 'w':
		mult = "万"
	default:
		return
	}
	p.match(p.t.units, i+1, func(e int, u string) { fn(e, wUnitMult, mult+u) })
}

// to reads a range separator of measure: - ~ 到.
func (p *parser) isTo(i int) bool {
	c := p.at(i)
	return c == '-' || c == '~' || c == '到'
}

// meas is one parse of measure's "measure" graph, rendered only when it
// could be chosen.
type meas struct {
	hasPre  bool
	pre     num    // the range's first number
	preUnit string // its unit, if any
	n       num
	unit    string
}

func (p *parser) measString(m meas) string {
	var b strings.Builder
	if m.hasPre {
		p.writeNum(&b, m.pre, true)
		b.WriteString(m.preUnit)
		b.WriteString("到")
	}
	p.writeNum(&b, m.n, true)
	b.WriteString(m.unit)
	return fixMeasure(b.String())
}

// measureCore offers measure's "measure" graph: [number [units] to] number
// units, numbers read with thousands commas stripped and a bare 二 as 两.
func (p *parser) measureCore(i int, fn func(end, w int, m meas)) {
	for _, a := range p.nums(i, true) {
		q := p.skipSpace(a.end)
		p.units(q, func(ue, uw int, u string) {
			fn(ue, uw, meas{n: a, unit: u})
		})
		rangeFrom := func(t, pw int, pu string) {
			for _, b := range p.nums(t, true) {
				p.units(p.skipSpace(b.end), func(ue, uw int, u string) {
					fn(ue, pw+uw, meas{hasPre: true, pre: a, preUnit: pu, n: b, unit: u})
				})
			}
		}
		if p.isTo(a.end) {
			rangeFrom(a.end+1, 0, "")
		}
		p.units(q, func(ue, uw int, u string) {
			if p.isTo(ue) {
				rangeFrom(ue+1, uw, u)
			}
		})
	}
}

// fixMeasure applies measure's rewrites: 两两/两月/两号 at the start and
// 到两两/到两月/到两号 at the end are read with 二.
func fixMeasure(s string) string {
	for _, u := range [...]string{"两", "月", "号"} {
		if strings.HasPrefix(s, "两"+u) {
			s = "二" + s[len("两"):]
		}
		if strings.HasSuffix(s, "到两"+u) {
			s = s[:len(s)-len("两"+u)] + "二" + u
		}
	}
	return s
}

// yyyy reads four digits one by one.
func (p *parser) yyyy(i int) (string, bool) {
	if i+4 > len(p.r) {
		return "", false
	}
	for q := i; q < i+4; q++ {
		if !isDigit(p.r[q]) {
			return "", false
		}
	}
	return p.digitsString(i, i+4), true
}

// yearUnit offers 年, 年度, 赛季 at i.
func (p *parser) yearUnit(i int, fn func(end int, u string)) {
	switch {
	case p.at(i) == '年':
		fn(i+1, "年")
		if p.at(i+1) == '度' {
			fn(i+2, "年度")
		}
	case p.at(i) == '赛' && p.at(i+1) == '季':
		fn(i+2, "赛季")
	}
}

// annual offers [yyyy [unit] to] yyyy unit.
func (p *parser) annual(i int, fn func(end int, out string)) {
	y, ok := p.yyyy(i)
	if !ok {
		return
	}
	p.yearUnit(i+4, func(e int, u string) { fn(e, y+u) })
	second := func(t int, pre string) {
		if y2, ok := p.yyyy(t); ok {
			p.yearUnit(t+4, func(e int, u string) { fn(e, pre+"到"+y2+u) })
		}
	}
	if p.isTo(i + 4) {
		second(i+5, y)
	}
	p.yearUnit(p.skipSpace(i+4), func(e int, u string) {
		if p.isTo(e) {
			second(e+1, y+u)
		}
	})
}

func (p *parser) measure(i int, s sink) {
	// annual first: 2015年 is read 二零一五年, not 两千零一十五年, on a tie.
	p.annual(i, func(e int, out string) { s.put(e, wMeasure, out) })
	p.measureCore(i, func(e, w int, m meas) {
		if s.want(e, wMeasure+w) {
			s.put(e, wMeasure+w, p.measString(m))
		}
		// 10km/h → 每小时十公里
		q := p.skipSpace(e)
		if p.at(q) != '/' {
			return
		}
		q = p.skipSpace(q + 1)
		p.measureCore(q, func(e2, w2 int, den meas) {
			if s.want(e2, wMeasure+w+w2) {
				s.put(e2, wMeasure+w+w2, "每"+p.measString(den)+p.measString(m))
			}
		})
		p.units(q, func(e2, w2 int, den string) {
			if s.want(e2, wMeasure+w+w2) {
				s.put(e2, wMeasure+w+w2, "每"+den+p.measString(m))
			}
		})
	})
}

// ---- money ----

func (p *parser) money(i int, s sink) {
	p.match(p.t.currency, i, func(ce int, cur string) {
		for _, n := range p.nums(p.skipSpace(ce), false) {
			if s.want(n.end, wMoney) {
				s.put(n.end, wMoney, p.numString(n, false)+cur)
			}
		}
	})
}

// ---- time ----

func isColon(c rune) bool { return c == ':' || c == '：' }

// timeToken offers h:mm[:ss][ ][noon], read noon, hour, minute, second.
func (p *parser) timeToken(i int, fn func(end int, out string)) {
	p.match(p.t.hour, i, func(he int, h string) {
		if !isColon(p.at(he)) {
			return
		}
		p.match(p.t.minute, he+1, func(me int, m string) {
			tail := func(e int, hms string) {
				fn(e, hms)
				if p.at(e) == ' ' {
					fn(e+1, hms)
				}
				p.match(p.t.noon, e, func(ne int, noon string) { fn(ne, noon+hms) })
				if p.at(e) == ' ' {
					p.match(p.t.noon, e+1, func(ne int, noon string) { fn(ne, noon+hms) })
				}
			}
			tail(me, h+m)
			if isColon(p.at(me)) {
				p.match(p.t.second, me+1, func(se int, sec string) { tail(se, h+m+sec) })
			}
		})
	})
}

func (p *parser) time(i int, s sink) {
	p.timeToken(i, func(e int, a string) {
		s.put(e, wTime, a)
		if c := p.at(e); c == '-' || c == '~' {
			p.timeToken(e+1, func(e2 int, b string) { s.put(e2, wTime, a+"到"+b) })
		}
	})
}

// ---- cardinal ----

// runTail offers the ends of a digits.plus that starts a run at i: any of
// its first fracCap digits, or the run's end.
func (p *parser) runTail(i int, fn func(end int)) {
	e := int(p.digitRun[i])
	for q := i + 1; q <= e && q-i <= fracCap; q++ {
		fn(q)
	}
	if e-i > fracCap {
		fn(e)
	}
}

func (p *parser) cardinal(i int, s sink) {
	r := p.r
	if isDigit(r[i]) {
		// digits.plus (. digits.plus){3}: 127.0.0.1, read digit by digit.
		// digits.plus (- digits.plus){2}: 0755-123-456.
		for _, sep := range [...]rune{'.', '-'} {
			q, ok := i, true
			for k := 0; k < 3-btoi(sep == '-') && ok; k++ {
				q = int(p.digitRun[q])
				ok = p.at(q) == sep && isDigit(p.at(q+1))
				q++
			}
			if ok {
				p.runTail(q, func(e int) {
					if s.want(e, wCardinal) {
						s.put(e, wCardinal, p.digitsString(i, e))
					}
				})
			}
		}
		// xxx-xxxxxxxx
		if p.digitRun[i] >= int32(i+3) && p.at(i+3) == '-' && p.digitRun[i+4] >= int32(i+12) {
			s.put(i+12, wCardinal, p.digitsString(i, i+12))
		}
	}
	// percent: 百分之 + number
	for _, n := range p.nums(i, false) {
		if n.pct && n.body == n.start && s.want(n.end, wCardinal) {
			s.put(n.end, wCardinal, p.numString(n, false))
		}
	}
	// phone numbers, read with 幺 for 1
	p.match(p.t.phone, i, func(e int, out string) { s.put(e, wCardinal+wPhone, out) })
	if isDigit(r[i]) && p.digitRun[i] >= int32(i+11) {
		s.put(i+11, wCardinal+wPhone, p.phoneDigits(i, i+11))
	}
	if r[i] == '尾' && p.at(i+1) == '号' {
		q := i + 2
		for _, c := range [...]rune{-1, '是', '为'} {
			if c >= 0 {
				if p.at(i+2) != c {
					continue
				}
				q = i + 3
			}
			if q < len(r) && isDigit(r[q]) && p.digitRun[q] >= int32(q+4) {
				s.put(q+4, wCardinal+wPhone, string(r[i:q])+p.phoneDigits(q, q+4))
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *parser) phoneDigits(i, j int) string {
	var b strings.Builder
	for q := i; q < j; q++ {
		if digitValue(p.r[q]) == 1 {
			b.WriteString("幺")
		} else {
			b.WriteString(p.digitName(p.r[q]))
		}
	}
	return b.String()
}

// ---- math ----

// math offers math.py's unambiguous operators (×, ÷, ≥, …) standing alone.
// Its main graph, number (op number)*, is unbounded, so the parse loop runs
// it as extra lattice states (see lattice.mathStep) rather than as tokens.
func (p *parser) math(i int, s sink) {
	p.match(p.t.unambiguous, i, func(e int, out string) { s.put(e, wMath, out) })
}

// ---- char ----

// char is the fallback rule, for the rule-by-rule tests.
func (p *parser) char(i int, s sink) { s.put(i+1, wChar, string(p.r[i])) }
