package en

import "strings"

// cardinalRule: "-23" -> "negative twenty three".
func (m *matcher) cardinalRule(c *cands, p int) {
	i, sign := p, ""
	if m.at(i) == '-' {
		i, sign = i+1, "negative "
	}
	for _, x := range m.numbers(i) {
		if s, w, ok := m.cardinal(x.digits, x.commas); ok {
			c.add(p, x.end, wCardinal+w, sign+s)
		}
	}
}

// ordinalRule: "21st" -> "twenty first".
func (m *matcher) ordinalRule(c *cands, p int) {
	for _, x := range m.numbers(p) {
		d := x.digits
		want := "th"
		if len(d) < 2 || d[len(d)-2] != '1' {
			switch d[len(d)-1] {
			case '1':
				want = "st"
			case '2':
				want = "nd"
			case '3':
				want = "rd"
			}
		}
		for _, suf := range [...]string{want, strings.ToUpper(want), superscriptSuffix[want]} {
			if m.hasPrefix(x.end, suf) {
				if s, ok := m.names(d); ok {
					c.add(p, x.end+len([]rune(suf)), wOrdinal, m.n.ordinalize(s))
				}
			}
		}
	}
}

// decimalPart is one reading of a decimal number without its sign.
type decimalPart struct {
	end int
	w   weight
	out string
	// frac is the raw fractional digits ("" when there is no point) and
	// intOut the spoken integer part; money re-reads them.
	frac, intOut, qty string
	hasInt            bool
}

// decimals lists decimal.final_graph_wo_negative readings at i: "12.5",
// ".5", "1.5 million", and (integer of at most three digits) "1 billion".
// abbr admits "m", "bn", "k"... as quantities (the money variant).
func (m *matcher) decimals(i int, abbr bool) []decimalPart {
	r := m.at(i)
	if !isDigit(r) && r != '.' {
		return nil
	}
	if abbr {
		return m.decimalsAt(i, true)
	}
	if d, ok := m.decCache[i]; ok {
		return d
	}
	if m.decCache == nil {
		m.decCache = make(map[int][]decimalPart)
	}
	d := m.decimalsAt(i, false)
	m.decCache[i] = d
	return d
}

func (m *matcher) decimalsAt(i int, abbr bool) []decimalPart {
	var out []decimalPart
	type intPart struct {
		end   int
		w     weight
		spoke string
		ok    bool
	}
	ints := []intPart{{end: i, ok: false}}
	for _, x := range m.numbers(i) {
		if _, w, ok := m.graphWithAnd(x.digits); ok {
			s, _, _ := m.cardinal(x.digits, x.commas)
			ints = append(ints, intPart{end: x.end, w: w, spoke: s, ok: true})
		}
	}
	for _, ip := range ints {
		if m.at(ip.end) != '.' {
			continue
		}
		f := m.digitRun(ip.end + 1)
		if f == ip.end+1 {
			continue
		}
		frac := m.str(ip.end+1, f)
		spoken := "point " + m.n.singleDigits(frac)
		if ip.ok {
			spoken = ip.spoke + " " + spoken
		}
		base := decimalPart{end: f, w: ip.w, out: spoken, frac: frac, intOut: ip.spoke, hasInt: ip.ok}
		out = append(out, base)
		for _, q := range m.quantities(f, abbr, true) {
			d := base
			d.end, d.out, d.qty = q.end, spoken+" "+q.out, q.out
			out = append(out, d)
		}
	}
	// integer_part (hundred component: 1-3 digits, no leading zero) + quantity
	if j := m.digitRun(i); j > i && j-i <= 3 && m.rs[i] != '0' {
		d := m.str(i, j)
		s, _, _ := m.cardinal(d, false)
		for _, q := range m.quantities(j, abbr, false) {
			out = append(out, decimalPart{end: q.end, out: s + " " + q.out, intOut: s, hasInt: true, qty: q.out})
		}
	}
	return out
}

type span struct {
	end int
	out string
}

// quantities matches an optional space and a quantity word at i.
func (m *matcher) quantities(i int, abbr, thousand bool) []span {
	var out []span
	for _, j := range m.optSpace(i) {
		k := j
		for k < len(m.rs) && isAlpha(m.rs[k]) {
			k++
		}
		if k == j {
			continue
		}
		w := m.str(j, k)
		isK := w == "k" || w == "K" || w == "thousand"
		if isK && !thousand {
			continue
		}
		if m.n.t.quantity[w] {
			out = append(out, span{k, w})
		} else if q, ok := m.n.t.qtyAbbr[w]; ok && abbr {
			out = append(out, span{k, q})
		}
	}
	return out
}

// decimalRule: "-12.5006 billion" -> "minus twelve point five oh oh six billion".
func (m *matcher) decimalRule(c *cands, p int) {
	i, sign := p, ""
	if m.at(i) == '-' {
		i, sign = i+1, "minus "
	}
	for _, d := range m.decimals(i, false) {
		c.add(p, d.end, wDecimal+d.w, sign+d.out)
	}
}

// fracPart is a fraction reading.
type fracPart struct {
	end int
	out string
}

// fractions lists fraction.graph readings at i: "23 4/5", "4/5th", "½",
// "1 ½".
func (m *matcher) fractions(i int) []fracPart {
	r := m.at(i)
	if !isDigit(r) && !isFracSymbol(m.n, r) {
		return nil
	}
	var out []fracPart
	for _, s := range m.memo(memoFractions, i, m.fractionsAt) {
		out = append(out, fracPart(s))
	}
	return out
}

func (m *matcher) fractionsAt(i int) []span {
	var out []span
	type pre struct {
		at     int
		spoken string
	}
	pres := []pre{{at: i}}
	for _, x := range m.numbers(i) {
		if m.at(x.end) == ' ' {
			if s, ok := m.names(x.digits); ok {
				pres = append(pres, pre{at: x.end + 1, spoken: s})
			}
		}
	}
	for _, pr := range pres {
		join := func(f string) string {
			if pr.spoken == "" {
				return f
			}
			s := pr.spoken + " and " + f
			if strings.HasSuffix(s, "and one half") {
				s = strings.TrimSuffix(s, "one half") + "a half"
			}
			return s
		}
		if v, ok := m.n.t.fracSymbol[m.at(pr.at)]; ok {
			num, den, _ := strings.Cut(v, "/")
			out = append(out, span{pr.at + 1, join(m.n.fraction(num, den))})
		}
		for _, x := range m.numbers(pr.at) {
			nume, ok := x.digits, true
			if _, ok = m.names(nume); !ok {
				continue
			}
			var seps []int
			if m.at(x.end) == '/' {
				seps = append(seps, x.end+1)
			}
			if m.hasPrefix(x.end, " / ") {
				seps = append(seps, x.end+3)
			}
			for _, s := range seps {
				for _, y := range m.numbers(s) {
					if _, ok := m.names(y.digits); !ok {
						continue
					}
					spoken := join(m.n.fraction(nume, y.digits))
					out = append(out, span{y.end, spoken})
					for _, suf := range []string{"rd", "th", "st", "nd", "RD", "TH", "ST", "ND"} {
						if m.hasPrefix(y.end, suf) {
							out = append(out, span{y.end + 2, spoken})
						}
					}
				}
			}
		}
	}
	return out
}

// fraction speaks numerator/denominator: "three quarters", "one half",
// "twenty three forty fourths", "two over one".
func (n *Normalizer) fraction(num, den string) string {
	ns, _ := n.names(num)
	ds, _ := n.names(den)
	switch ds {
	case "one":
		ds = "over one"
	case "two":
		ds = "half"
	case "four":
		ds = "quarter"
	default:
		ds = n.ordinalize(ds)
	}
	if ns != "one" {
		switch {
		case strings.HasSuffix(ds, "half"):
			ds = strings.TrimSuffix(ds, "half") + "halves"
		case ds == "over one":
		default:
			ds += "s"
		}
	}
	return ns + " " + ds
}

// fractionRule: "23 4/5" -> "twenty three and four fifths".
func (m *matcher) fractionRule(c *cands, p int) {
	for _, f := range m.fractions(p) {
		c.add(p, f.end, wFraction, f.out)
	}
}

var superscriptSuffix = map[string]string{"st": "ˢᵗ", "nd": "ⁿᵈ", "rd": "ʳᵈ", "th": "ᵗʰ"}
