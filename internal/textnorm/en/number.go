package en

import "strings"

// Path weights are kept as integers in units of 1e-5 so that the tiny
// tie-breaking weights upstream uses (±0.0001, 0.00001) add up exactly.
type weight = int64

const (
	wUnit   weight = 100000 // 1.0
	wTiny   weight = 1      // 0.00001: graph_with_and's plain path
	wSmall  weight = 10     // 0.0001
	wTenth  weight = 10000  // 0.1
	wNoPath weight = 1 << 50
)

// scales are the group names the cardinal graph knows, 10^3 upward.
var scales = []string{"", "thousand", "million", "billion", "trillion", "quadrillion", "quintillion", "sextillion"}

// maxCardinalDigits bounds the number-name graph; longer digit strings are
// read digit by digit, as upstream does for anything its graph rejects.
const maxCardinalDigits = 3 * 8

// names spells a digit string the way the upstream number-name graph does:
// "101111" -> "one hundred one thousand one hundred eleven" (no "and").
// It rejects leading zeros (other than "0" itself) and over-long input.
func (n *Normalizer) names(d string) (string, bool) {
	if d == "" || len(d) > maxCardinalDigits || !allDigits(d) {
		return "", false
	}
	if d == "0" {
		return "zero", true
	}
	if d[0] == '0' {
		return "", false
	}
	var b strings.Builder
	groups := (len(d) + 2) / 3
	first := len(d) - (groups-1)*3
	for g := 0; g < groups; g++ {
		var part string
		if g == 0 {
			part = d[:first]
		} else {
			part = d[first+(g-1)*3 : first+g*3]
		}
		w := n.hundreds(part)
		if w == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if s := scales[groups-1-g]; s != "" {
			b.WriteByte(' ')
			b.WriteString(s)
		}
	}
	return b.String(), true
}

// hundreds spells a group of up to three digits; "" for an all-zero group.
func (n *Normalizer) hundreds(g string) string {
	for len(g) > 0 && g[0] == '0' {
		g = g[1:]
	}
	switch len(g) {
	case 0:
		return ""
	case 1:
		return n.t.digit[g]
	case 2:
		return n.tens(g)
	}
	s := n.t.digit[g[:1]] + " hundred"
	if r := n.hundreds(g[1:]); r != "" {
		s += " " + r
	}
	return s
}

// tens spells 10..99.
func (n *Normalizer) tens(g string) string {
	if g[0] == '1' {
		return n.t.teen[g]
	}
	s := n.t.ty[g[:1]]
	if g[1] != '0' {
		s += " " + n.t.digit[g[1:]]
	}
	return s
}

// withAnd applies add_optional_and to a spelled number: one "hundred " not
// followed by a thousand/million, or one "thousand " not followed by a
// hundred, gains "and" at weight -0.0001; the plain form costs 0.00001.
func withAnd(s string) (string, weight) {
	best := -1
	for i := 0; ; {
		j := strings.Index(s[i:], "hundred ")
		if j < 0 {
			break
		}
		at := i + j
		rest := s[at+len("hundred "):]
		if !strings.Contains(rest, "thousand") && !strings.Contains(rest, "million") {
			best = at + len("hundred ")
		}
		i = at + 1
	}
	if best < 0 {
		for i := 0; ; {
			j := strings.Index(s[i:], "thousand ")
			if j < 0 {
				break
			}
			at := i + j
			rest := s[at+len("thousand "):]
			if !strings.Contains(rest, "hundred") {
				best = at + len("thousand ")
			}
			i = at + 1
		}
	}
	if best < 0 {
		return s, wTiny
	}
	return s[:best] + "and " + s[best:], -wSmall
}

// graphWithAnd is cardinal.graph_with_and: the spelled number with the
// optional "and"; ok is false where the number-name graph has no path.
func (n *Normalizer) graphWithAnd(d string) (string, weight, bool) {
	s, ok := n.names(d)
	if !ok {
		return "", 0, false
	}
	out, w := withAnd(s)
	return out, w, true
}

// singleDigits reads digits one by one with "oh" for zero, the cheapest
// branch of the non-deterministic single_digits_graph.
func (n *Normalizer) singleDigits(d string) string {
	var b strings.Builder
	b.Grow(len(d) * 6)
	for i := 0; i < len(d); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		if d[i] == '0' {
			b.WriteString("oh")
		} else {
			b.WriteString(n.t.digit[d[i:i+1]])
		}
	}
	return b.String()
}

// cardinal is the cardinal rule's final_graph (non-deterministic build) for
// a digit string whose commas, if any, have been validated and removed: the
// best of the spelled number (with the "one thousand" -> "thousand" bonus),
// digit-by-digit reading, and leading zeros read as "oh".
func (n *Normalizer) cardinal(d string, hadCommas bool) (string, weight, bool) {
	best, bw, ok := "", wNoPath, false
	try := func(s string, w weight) {
		if w < bw {
			best, bw, ok = s, w, true
		}
	}
	if s, w, good := n.graphWithAnd(d); good {
		try(s, w)
		if strings.HasPrefix(s, "one thousand") {
			try(s[len("one "):], w-wSmall)
		}
	}
	if hadCommas {
		return best, bw, ok
	}
	if len(d) > 1 && d[0] == '0' {
		z := 0
		for z < len(d)-1 && d[z] == '0' {
			z++
		}
		if s, w, good := n.graphWithAnd(d[z:]); good {
			try(n.singleDigits(d[:z])+" "+s, w)
		}
	}
	try(n.singleDigits(d), wSmall)
	return best, bw, ok
}

// ordinalize turns the last word of a spelled number into its ordinal.
func (n *Normalizer) ordinalize(s string) string {
	i := strings.LastIndexByte(s, ' ') + 1
	last := s[i:]
	if o, ok := n.t.ordinal[last]; ok {
		return s[:i] + o
	}
	if strings.HasSuffix(last, "ty") {
		return s[:len(s)-2] + "tieth"
	}
	return s + "th"
}

// plural is SINGULAR_TO_PLURAL: suppletive table, then -ies, -es, -s.
func (n *Normalizer) plural(s string) string {
	if p, ok := n.t.suppletive[s]; ok {
		return p
	}
	if len(s) >= 2 && s[len(s)-1] == 'y' && strings.IndexByte("bcdfghjklmnpqrstvwxyz", s[len(s)-2]) >= 0 {
		return s[:len(s)-1] + "ies"
	}
	for _, suf := range []string{"s", "sh", "ch", "x", "z"} {
		if strings.HasSuffix(s, suf) {
			return s + "es"
		}
	}
	return s + "s"
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
