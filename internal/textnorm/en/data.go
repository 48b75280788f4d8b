package en

import (
	"embed"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The tables are copied verbatim from WeTextProcessing (Apache-2.0); see
// data/README.md for the origin and the list of files.
//
//go:embed data
var dataFS embed.FS

// pair is one row of a two-column table: written form, then spoken form.
// A one-column row maps a string to itself.
type pair struct{ from, to string }

// readTable parses an upstream TSV table. Upstream reads them with Python's
// csv module in text mode, so CRLF line ends (tts.tsv has them) and a
// missing final newline are both tolerated.
func readTable(name string) ([]pair, error) {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return nil, fmt.Errorf("read table %s: %w", name, err)
	}
	var rows []pair
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		from, to, found := strings.Cut(line, "\t")
		if !found {
			to = from
		}
		rows = append(rows, pair{from, to})
	}
	return rows, nil
}

// trie is a rune trie used for the all-prefix lookups the tagger needs
// (whitelist entries may contain spaces and punctuation). Children are kept
// in sorted slices: smaller and faster to build than a map per node.
type trie struct {
	keys []rune
	kids []*trie
	val  string
	ok   bool
}

func (t *trie) child(r rune) *trie {
	k := t.keys
	lo, hi := 0, len(k)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if k[mid] < r {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(k) && k[lo] == r {
		return t.kids[lo]
	}
	return nil
}

func (t *trie) add(key, val string) {
	n := t
	for _, r := range key {
		c := n.child(r)
		if c == nil {
			c = &trie{}
			i := 0
			for i < len(n.keys) && n.keys[i] < r {
				i++
			}
			n.keys = append(n.keys, 0)
			copy(n.keys[i+1:], n.keys[i:])
			n.keys[i] = r
			n.kids = append(n.kids, nil)
			copy(n.kids[i+1:], n.kids[i:])
			n.kids[i] = c
		}
		n = c
	}
	if !n.ok { // the first row wins, as in a union where ties keep the first path
		n.ok, n.val = true, val
	}
}

// match calls f for every key that is a prefix of rs[i:], shortest first.
func (t *trie) match(rs []rune, i int, f func(end int, val string)) {
	n := t
	for j := i; j < len(rs); j++ {
		n = n.child(rs[j])
		if n == nil {
			return
		}
		if n.ok {
			f(j+1, n.val)
		}
	}
}

// tables holds every parsed data table the rules use.
type tables struct {
	digit      map[string]string // "1" -> "one"
	teen       map[string]string // "11" -> "eleven"
	ty         map[string]string // "2" -> "twenty"
	ordinal    map[string]string // "one" -> "first"
	quantity   map[string]bool   // "million"
	qtyAbbr    map[string]string // "bn" -> "billion"
	fracSymbol map[rune]string   // '¾' -> "3/4"

	monthName    *trie             // "Jan" -> "january"
	monthNumber  map[string]string // "01" -> "january"
	monthNumber1 [10]string        // monthNumber for one digit, by value
	monthNumber2 [100]string       // monthNumber for two digits, by value
	week         *trie
	yearSuffix   *trie
	timeSuffix   *trie
	timeZone     *trie

	currency   *trie
	units      *trie             // unit.tsv and unit_alternatives.tsv, alternatives first
	unitKeys   map[string]string // the same, for case-folded lookups
	suppletive map[string]string

	whitelist *trie
	stateName map[string]string // "PA" / "P.A" -> "Pennsylvania"
	addrWord  *trie

	phonePrompt *trie
	ipPrompt    *trie
	ssnPrompt   *trie

	eSymbol map[rune]string // electronic/symbol.tsv
	eDomain map[string]string
	wSymbol map[rune]string // whitelist/symbol.tsv
}

func loadTables() (*tables, error) {
	t := &tables{}
	var err error
	read := func(name string) []pair {
		if err != nil {
			return nil
		}
		var rows []pair
		rows, err = readTable(name)
		return rows
	}
	inv := func(rows []pair) map[string]string {
		m := make(map[string]string, len(rows))
		for _, p := range rows {
			if _, dup := m[p.to]; !dup {
				m[p.to] = p.from
			}
		}
		return m
	}
	fwd := func(rows []pair) map[string]string {
		m := make(map[string]string, len(rows))
		for _, p := range rows {
			if _, dup := m[p.from]; !dup {
				m[p.from] = p.to
			}
		}
		return m
	}
	mkTrie := func(rows ...[]pair) *trie {
		tr := &trie{}
		for _, rs := range rows {
			for _, p := range rs {
				tr.add(p.from, p.to)
			}
		}
		return tr
	}

	t.digit = inv(read("number/digit.tsv"))
	t.teen = inv(read("number/teen.tsv"))
	t.ty = inv(read("number/ty.tsv"))
	t.ordinal = inv(read("ordinal/digit.tsv"))
	for k, v := range inv(read("ordinal/teen.tsv")) {
		t.ordinal[k] = v
	}
	t.quantity = map[string]bool{}
	for _, p := range read("number/thousand.tsv") {
		t.quantity[p.from] = true
	}
	t.qtyAbbr = fwd(read("number/quantity_abbr.tsv"))
	t.fracSymbol = map[rune]string{}
	for _, p := range read("number/fraction.tsv") {
		r, _ := utf8.DecodeRuneInString(p.from)
		t.fracSymbol[r] = p.to
	}

	t.monthName = mkTrie(read("date/month_name.tsv"), read("date/month_abbr.tsv"))
	t.monthNumber = fwd(read("date/month_number.tsv"))
	for k, v := range t.monthNumber {
		switch {
		case len(k) == 1 && allDigits(k):
			t.monthNumber1[k[0]-'0'] = v
		case len(k) == 2 && allDigits(k):
			t.monthNumber2[(k[0]-'0')*10+k[1]-'0'] = v
		}
	}
	t.week = mkTrie(read("date/week.tsv"))
	t.yearSuffix = mkTrie(read("date/year_suffix.tsv"))
	t.timeSuffix = mkTrie(read("time/suffix.tsv"))
	t.timeZone = mkTrie(read("time/zone.tsv"))

	t.currency = mkTrie(read("money/currency_major.tsv"))
	// Where unit.tsv and unit_alternatives.tsv disagree ("h" -> "H" or
	// "hour"), upstream has an exact tie; the spoken alternative reads better.
	alt, unit := read("measure/unit_alternatives.tsv"), read("measure/unit.tsv")
	t.units = mkTrie(alt, unit)
	t.unitKeys = fwd(append(append([]pair{}, alt...), unit...))
	t.suppletive = fwd(read("suppletive.tsv"))

	t.whitelist = &trie{}
	for _, p := range read("whitelist/tts.tsv") {
		t.whitelist.add(p.from, p.to)
	}
	t.wSymbol = map[rune]string{}
	for _, p := range read("whitelist/symbol.tsv") {
		r, _ := utf8.DecodeRuneInString(p.from)
		if _, dup := t.wSymbol[r]; !dup {
			t.wSymbol[r] = p.to
		}
		if p.from != "/" { // upstream composes the symbol table with "not /"
			t.whitelist.add(p.from, p.to)
		}
	}
	for _, p := range read("whitelist/alternatives.tsv") {
		t.whitelist.add(p.from, p.to)
	}
	t.stateName = map[string]string{}
	for _, p := range read("address/state.tsv") {
		name, abbr := p.from, p.to
		if _, dup := t.stateName[abbr]; !dup {
			t.stateName[abbr] = name
		}
		if len(abbr) > 1 {
			dotted := abbr[:1] + "." + abbr[1:]
			if _, dup := t.stateName[dotted]; !dup {
				t.stateName[dotted] = name
			}
			if _, dup := t.stateName[dotted+"."]; !dup {
				t.stateName[dotted+"."] = name
			}
		}
	}
	// get_formats: "st" -> "Street" also accepts "st.", "St", "St.".
	t.addrWord = &trie{}
	for _, p := range read("address/address_word.tsv") {
		t.addrWord.add(p.from, p.to)
		t.addrWord.add(p.from+".", p.to)
		t.addrWord.add(upperFirst(p.from), upperFirst(p.to))
		t.addrWord.add(upperFirst(p.from)+".", upperFirst(p.to))
	}

	t.phonePrompt = mkTrie(read("telephone/telephone_prompt.tsv"))
	t.ipPrompt = mkTrie(read("telephone/ip_prompt.tsv"))
	t.ssnPrompt = mkTrie(read("telephone/ssn_prompt.tsv"))

	t.eSymbol = map[rune]string{}
	for _, p := range read("electronic/symbol.tsv") {
		r, _ := utf8.DecodeRuneInString(p.from)
		t.eSymbol[r] = p.to
	}
	t.eDomain = fwd(read("electronic/domain.tsv"))
	if err != nil {
		return nil, err
	}
	return t, nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}
