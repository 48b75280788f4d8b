package en

import "strings"

// unitMatch is a unit reading: singular and plural spoken forms.
type unitMatch struct {
	end              int
	singular, plural string
}

// unitsAt lists measure units at i: table keys ("kg", "°C", "sq ft"), their
// capitalised spellings ("Kg", "KG"), each optionally followed by a
// "/unit" read as "per unit".
func (m *matcher) unitsAt(i int, allowPer bool) []unitMatch {
	var base []span
	m.n.t.units.match(m.rs, i, func(e int, v string) { base = append(base, span{e, v}) })
	if isUpper(m.at(i)) {
		j := i
		for j < len(m.rs) && isAlpha(m.rs[j]) && j-i < 12 {
			j++
		}
		for e := i + 2; e <= j; e++ {
			w := m.str(i, e)
			for _, k := range []string{strings.ToLower(w), strings.ToLower(w[:1]) + w[1:]} {
				if v, ok := m.n.t.unitKeys[k]; ok && k != w {
					base = append(base, span{e, v})
					break
				}
			}
		}
	}
	var out []unitMatch
	for _, b := range base {
		out = append(out, unitMatch{b.end, b.out, m.n.plural(b.out)})
		if !allowPer {
			continue
		}
		for _, k := range m.optSpace(b.end) {
			if m.at(k) != '/' {
				continue
			}
			for _, k2 := range m.optSpace(k + 1) {
				for _, u := range m.unitsAt(k2, false) {
					per := " per " + u.singular
					out = append(out, unitMatch{u.end, b.out + per, m.n.plural(b.out) + per})
				}
			}
		}
	}
	if allowPer && m.at(i) == '/' {
		for _, k := range m.optSpace(i + 1) {
			for _, u := range m.unitsAt(k, false) {
				out = append(out, unitMatch{u.end, "per " + u.singular, "per " + u.singular})
			}
		}
	}
	return out
}

// rangeCardinals lists measure's cardinal_graph readings at i: a number
// with optional "and", or a range "2-3", "2x3", "2 * 10".
func (m *matcher) rangeCardinals(i int) []decimalPart {
	var out []decimalPart
	for _, x := range m.numbers(i) {
		s, w, ok := m.graphWithAnd(x.digits)
		if !ok {
			continue
		}
		out = append(out, decimalPart{end: x.end, w: w, out: s, frac: x.digits})
		seps := []struct{ in, out string }{
			{"-", " to "}, {" - ", " to "}, {" x ", " by "}, {"x", " by "}, {"*", " times "}, {" * ", " times "},
		}
		for _, sp := range seps {
			if !m.hasPrefix(x.end, sp.in) {
				continue
			}
			k := x.end + len(sp.in)
			for _, y := range m.numbers(k) {
				if s2, w2, ok := m.graphWithAnd(y.digits); ok {
					out = append(out, decimalPart{end: y.end, w: w + w2, out: s + sp.out + s2})
				}
			}
		}
	}
	return out
}

// measureRule: "-12kg" -> "negative twelve kilograms", "3.5 cm²" -> "three
// point five square centimeters", "2-3 °C" -> "two to three degrees Celsius".
func (m *matcher) measureRule(c *cands, p int) {
	r := m.at(p)
	if isDigit(r) || isAlpha(r) && !isAlpha(m.at(p+1)) && !isSpace(m.at(p+1)) || isAlpha(r) && m.at(p+1) == ' ' && m.at(p+2) == '=' {
		m.math(c, p)
	}
	if r == '/' {
		for _, u := range m.unitsAt(p, true) {
			c.add(p, u.end, wMeasure, u.plural)
		}
		return
	}
	if !isDigit(r) && r != '-' && r != '.' && !isFracSymbol(m.n, r) {
		return
	}
	i, csign, dsign := p, "", ""
	if r == '-' {
		i, csign, dsign = p+1, "negative ", "minus "
	}
	units := func(k int, f func(u unitMatch)) {
		for _, k2 := range m.optSpace(k) {
			for _, u := range m.unitsAt(k2, true) {
				if m.boundary(u.end) { // before the reading is built
					f(u)
				}
			}
		}
	}
	for _, d := range m.decimals(i, false) {
		units(d.end, func(u unitMatch) { c.add(p, u.end, wMeasure+d.w, dsign+d.out+" "+u.plural) })
		if dsign == "" {
			for _, k := range m.optSpace(d.end) {
				for _, radio := range []string{"AM", "FM"} {
					if m.hasPrefix(k, radio) {
						c.add(p, k+2, wMeasure+d.w, d.out+" "+radio)
					}
				}
			}
			// decimal_times: "1.5x"; upstream's "x" and " times" readings
			// tie, and "times" is the one a listener understands.
			if r := m.at(d.end); r == 'x' || r == 'X' {
				c.add(p, d.end+1, wMeasure+d.w, d.out+" times")
			}
			if m.at(d.end) == '-' {
				k := d.end + 1
				for k < len(m.rs) && isAlpha(m.rs[k]) {
					k++
				}
				if k > d.end+1 {
					c.add(p, k, wMeasure+d.w, d.out+" "+m.str(d.end+1, k))
				}
			}
		}
	}
	for _, x := range m.rangeCardinals(i) {
		if x.frac == "1" {
			units(x.end, func(u unitMatch) { c.add(p, u.end, wMeasure, csign+"one "+u.singular) })
			continue
		}
		units(x.end, func(u unitMatch) { c.add(p, u.end, wMeasure+x.w, csign+x.out+" "+u.plural) })
	}
	if csign == "" {
		for _, f := range m.fractions(i) {
			units(f.end, func(u unitMatch) { c.add(p, u.end, wMeasure, f.out+" "+u.plural) })
		}
		m.address(c, p)
	}
}

func isFracSymbol(n *Normalizer, r rune) bool {
	_, ok := n.t.fracSymbol[r]
	return ok
}

// address: "2788 San Tomas Expy, Santa Clara, CA 95051" -> "twenty seven
// eighty eight San Tomas Expressway, Santa Clara, California nine five oh
// five one".
func (m *matcher) address(c *cands, p int) {
	j := m.digitRun(p)
	if j == p || m.at(j) != ' ' || !(isUpper(m.at(j+1)) || isDigit(m.at(j+1))) {
		return
	}
	d := m.str(p, j)
	var numOut string
	if len(d) == 3 || len(d) == 4 {
		head, tail := d[:len(d)-2], d[len(d)-2:]
		h, ok1 := m.names(head)
		var t string
		ok2 := true
		if tail[0] == '0' {
			t, ok2 = m.names(tail[1:])
			t = "zero " + t
		} else {
			t, ok2 = m.names(tail)
		}
		if ok1 && ok2 && head[0] != '0' {
			numOut = h + " " + t
		}
	}
	if numOut == "" {
		var ok bool
		if numOut, ok = m.names(d); !ok {
			return
		}
	}
	i := j
	var b strings.Builder
	b.WriteString(numOut)
	// optional direction
	if m.at(i) == ' ' {
		if dir, ok := directions[m.at(i+1)]; ok && (m.at(i+2) == ' ' || m.at(i+2) == '.' && m.at(i+3) == ' ') {
			b.WriteString(" " + dir)
			i += 2
			if m.at(i) == '.' {
				i++
			}
		}
	}
	// " " + (ordinal | Capitalised) + " " + (Capitalised " ")* + street word
	if m.at(i) != ' ' {
		return
	}
	i++
	var words []string
	first := true
	for {
		k := i
		if first && isDigit(m.at(k)) {
			var ord []token
			oc := &cands{m: m}
			m.ordinalRule(oc, k)
			for _, t := range oc.list {
				ord = append(ord, *t)
			}
			if len(ord) == 0 {
				return
			}
			k = ord[0].end
			words = append(words, ord[0].out)
		} else {
			if !isUpper(m.at(k)) {
				break
			}
			k++
			for isAlpha(m.at(k)) {
				k++
			}
			if first && k == i+1 {
				return // the first word needs at least two letters
			}
			words = append(words, m.str(i, k))
		}
		first = false
		if m.at(k) != ' ' {
			return
		}
		i = k + 1
		// try the street word here
		found := false
		m.n.t.addrWord.match(m.rs, i, func(e int, v string) {
			if found || (e < len(m.rs) && isAlpha(m.rs[e])) {
				return
			}
			found = true
			base := b.String() + " " + strings.Join(words, " ") + " " + v
			if m.at(e) == '.' {
				c.add(p, e+1, wMeasure, base)
			}
			c.add(p, e, wMeasure, base)
			m.addressTail(c, p, e, base)
		})
		if found {
			return
		}
	}
}

// addressTail matches ", City, ST 12345" after a street.
func (m *matcher) addressTail(c *cands, p, i int, base string) {
	k := i
	city := ""
	if m.hasPrefix(k, ", ") {
		e := k + 2
		for e < len(m.rs) && (isAlpha(m.rs[e]) || m.rs[e] == ' ') {
			e++
		}
		if e > k+2 {
			city = m.str(k, e)
			k = e
		}
	}
	state := ""
	if m.hasPrefix(k, ", ") {
		e := k + 2
		for e < len(m.rs) && (isUpper(m.rs[e]) || m.rs[e] == '.') && e-k < 8 {
			e++
		}
		for ; e > k+2; e-- {
			if name, ok := m.n.t.stateName[m.str(k+2, e)]; ok {
				state = ", " + name
				k = e
				break
			}
		}
	}
	z := k
	if m.at(z) == ',' {
		z++
	}
	if m.at(z) != ' ' || m.digitRun(z+1) != z+6 {
		return
	}
	c.add(p, z+6, wMeasure, base+city+state+" "+m.n.singleDigits(m.str(z+1, z+6)))
}

// moneyRule: "$12.05" -> "twelve point oh five dollars", "$1" -> "one
// dollar", "$1.2 million" -> "one point two million dollars".
func (m *matcher) moneyRule(c *cands, p int) {
	m.n.t.currency.match(m.rs, p, func(i int, cur string) {
		plural := m.n.plural(cur)
		zeroFrac := func(k int) []int {
			ends := []int{k}
			if m.at(k) == '.' && m.at(k+1) == '0' {
				e := k + 1
				for m.at(e) == '0' {
					e++
				}
				ends = append(ends, e)
			}
			return ends
		}
		for _, x := range m.numbers(i) {
			if x.digits == "1" && !x.commas {
				for _, e := range zeroFrac(x.end) {
					c.add(p, e, wMoney, "one "+cur)
				}
				continue
			}
			if s, w, ok := m.graphWithAnd(x.digits); ok {
				for _, e := range zeroFrac(x.end) {
					c.add(p, e, wMoney+w, s+" "+plural)
				}
			}
		}
		for _, d := range m.decimals(i, true) {
			if d.qty == "" && strings.Trim(d.frac, "0") == "" {
				continue // "$1.00" is the integer reading above
			}
			var parts []string
			if d.hasInt {
				parts = append(parts, d.intOut)
			}
			if d.frac != "" {
				f := strings.TrimRight(d.frac, "0")
				if f == "" {
					f = d.frac
				}
				parts = append(parts, "point "+m.n.singleDigits(f))
			}
			if d.qty != "" {
				parts = append(parts, d.qty)
			}
			c.add(p, d.end, wMoney+d.w, strings.Join(parts, " ")+" "+plural)
		}
	})
}

// math: "5 + 3 = 8" -> "five plus three equals eight", "x = 2 * 3".
func (m *matcher) math(c *cands, p int) {
	// Both forms have an "=" within a few characters.
	eq := false
	for j := p; j < len(m.rs) && j-p < 48 && m.rs[j] != '\n'; j++ {
		if m.rs[j] == '=' {
			eq = true
			break
		}
	}
	if !eq {
		return
	}
	type term struct {
		end int
		w   weight
		out string
	}
	terms := func(i int, letters bool) []term {
		var out []term
		for _, x := range m.rangeCardinals(i) {
			out = append(out, term{x.end, x.w, x.out})
		}
		if letters && isAlpha(m.at(i)) {
			out = append(out, term{i + 1, 0, string(m.rs[i])})
		}
		return out
	}
	// delim is an optional space; the reading always has one.
	delim := func(i int) int {
		if m.at(i) == ' ' {
			return i + 1
		}
		return i
	}
	op := func(i int) (int, string, bool) {
		s, ok := mathOps[m.at(i)]
		return i + 1, s, ok
	}
	for _, a := range terms(p, true) {
		k := delim(a.end)
		if e, o, ok := op(k); ok {
			for _, b := range terms(delim(e), false) {
				k2 := delim(b.end)
				if m.at(k2) != '=' {
					continue
				}
				for _, r := range terms(delim(k2+1), true) {
					c.add(p, r.end, wMeasure+a.w+b.w+r.w, a.out+" "+o+" "+b.out+" equals "+r.out)
				}
			}
		}
		if m.at(k) == '=' {
			for _, b := range terms(delim(k+1), true) {
				if e, o, ok := op(delim(b.end)); ok {
					for _, r := range terms(delim(e), false) {
						c.add(p, r.end, wMeasure+a.w+b.w+r.w, a.out+" equals "+b.out+" "+o+" "+r.out)
					}
				}
			}
		}
	}
}

// mathOps is data/measure/math_operation.tsv.
var mathOps = map[rune]string{'+': "plus", '-': "minus", '/': "divided", '÷': "divided", ':': "divided", '×': "times", '*': "times", '·': "times"}

var directions = map[rune]string{'E': "East", 'S': "South", 'W': "West", 'N': "North"}
