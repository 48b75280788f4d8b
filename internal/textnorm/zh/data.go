package zh

import (
	"embed"
	"fmt"
	"strings"
	"sync"
)

// The grammar tables are WeTextProcessing's tn/chinese/data files (Apache-2.0),
// copied unchanged; see data/README.md for the origin and the licence.
//
//go:embed data
var dataFS embed.FS

// trie maps rune sequences to outputs; a key may have several outputs (a
// pynini string_file with repeated inputs is a union), kept in file order.
// All edges live in one map, which is much cheaper to build than a map per
// node.
type trie struct {
	next  map[uint64]int32 // node<<32 | rune → child node
	outs  [][]string       // outputs of each node
	first []rune           // the runes keys start with
	bit   uint32           // this trie's bit in tables.first
}

func newTrie() *trie { return &trie{next: make(map[uint64]int32), outs: [][]string{nil}} }

func edge(n int32, c rune) uint64 { return uint64(n)<<32 | uint64(uint32(c)) }

func (t *trie) add(key, out string) {
	n := int32(0)
	for _, c := range key {
		nx, ok := t.next[edge(n, c)]
		if !ok {
			if n == 0 {
				t.first = append(t.first, c)
			}
			nx = int32(len(t.outs))
			t.outs = append(t.outs, nil)
			t.next[edge(n, c)] = nx
		}
		n = nx
	}
	for _, o := range t.outs[n] {
		if o == out {
			return
		}
	}
	t.outs[n] = append(t.outs[n], out)
}

// match calls fn for every key that starts at r[i], shortest first, with the
// index just past the key and the key's output.
func (t *trie) match(r []rune, i int, fn func(end int, out string)) {
	n := int32(0)
	for j := i; j < len(r); j++ {
		nx, ok := t.next[edge(n, r[j])]
		if !ok {
			return
		}
		n = nx
		for _, o := range t.outs[n] {
			fn(j+1, o)
		}
	}
}

// tables holds every grammar table, parsed once.
type tables struct {
	digit, zero, teen map[rune]string // number/digit.tsv, zero.tsv, teen.tsv
	sign              map[rune]string // number/sign.tsv
	dot               map[rune]string // number/dot.tsv

	month, monthMM, day *trie // date/{m,mm}.tsv, date/mm.tsv, date/{d,dd}.tsv
	hour, minute        *trie // time/hour.tsv, time/minute.tsv
	second, noon        *trie // time/second.tsv, time/noon.tsv

	operator, unambiguous *trie // math/operator.tsv (+ ~ : < >), operator_unambiguous.tsv
	currency              *trie // money/code.tsv ∪ symbol.tsv
	units                 *trie // measure/units_en.tsv ∪ units_zh.tsv
	phone                 *trie // cardinal/phone.tsv
	whitelist             *trie // default/whitelist.tsv ∪ erhua/whitelist.tsv
	team                  *trie // sport/country.tsv ∪ club.tsv

	tradToSimple map[rune]rune // char/traditional_to_simple.tsv
	fullToHalf   map[rune]rune // char/fullwidth_to_halfwidth.tsv
	puncts       map[rune]bool // char/punctuations_zh.tsv
	blacklist    map[rune]bool // default/blacklist.tsv (interjections)
	charsetOnce  sync.Once
	charset      map[rune]bool // char/charset_*.tsv, loaded for TagOOV only

	// chars describes every rune that has a simplified form or starts a
	// trie key, so that the parser looks each input rune up once.
	chars map[rune]charInfo
}

// charInfo is what the parser needs to know about one input rune.
type charInfo struct {
	simple      rune   // simplified form (traditional_to_simple.tsv), or 0
	first       uint32 // tries (trie.bit) with a key starting with the rune
	simpleFirst uint32 // the same for the simplified form
}

var (
	tabOnce sync.Once
	tab     *tables
	tabErr  error
)

// loadTables parses the embedded tables on first use. An error can only come
// from a broken build (the files are embedded), so callers panic on it.
func loadTables() *tables {
	tabOnce.Do(func() { tab, tabErr = parseTables() })
	if tabErr != nil {
		panic("textnorm/zh: " + tabErr.Error())
	}
	return tab
}

// oovCharset returns the charset of the OOV tagger, parsed on first use: it
// is the largest table and only TagOOV needs it.
func (t *tables) oovCharset() map[rune]bool {
	t.charsetOnce.Do(func() {
		t.charset = make(map[rune]bool, 8192)
		for _, name := range []string{"char/charset_national_standard_2013_8105.tsv", "char/charset_extension.tsv"} {
			rows, err := readTSV(name)
			if err != nil {
				panic("textnorm/zh: " + err.Error()) // embedded: only a broken build fails
			}
			for _, row := range rows {
				for _, c := range row[0] {
					t.charset[c] = true
				}
			}
		}
	})
	return t.charset
}

// readTSV returns the rows of one embedded table: input, output. A row with
// one column maps the input to itself, as pynini's string_file does.
func readTSV(name string) ([][2]string, error) {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var rows [][2]string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		in, out, ok := strings.Cut(line, "\t")
		if !ok {
			out = in
		}
		rows = append(rows, [2]string{in, out})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	return rows, nil
}

func parseTables() (*tables, error) {
	t := &tables{}
	var err error
	runeMap := func(name string) map[rune]string {
		if err != nil {
			return nil
		}
		rows, e := readTSV(name)
		if e != nil {
			err = e
			return nil
		}
		m := make(map[rune]string, len(rows))
		for _, row := range rows {
			rs := []rune(row[0])
			if len(rs) != 1 {
				err = fmt.Errorf("%s: key %q is not one character", name, row[0])
				return nil
			}
			m[rs[0]] = row[1]
		}
		return m
	}
	trieOf := func(names ...string) *trie {
		tr := newTrie()
		for _, name := range names {
			if err != nil {
				return nil
			}
			rows, e := readTSV(name)
			if e != nil {
				err = e
				return nil
			}
			for _, row := range rows {
				tr.add(row[0], row[1])
			}
		}
		return tr
	}
	runeToRune := func(name string) map[rune]rune {
		m := runeMap(name)
		out := make(map[rune]rune, len(m))
		for k, v := range m {
			rs := []rune(v)
			if len(rs) != 1 {
				if err == nil {
					err = fmt.Errorf("%s: value %q is not one character", name, v)
				}
				return nil
			}
			out[k] = rs[0]
		}
		return out
	}
	runeSet := func(names ...string) map[rune]bool {
		s := make(map[rune]bool)
		for _, name := range names {
			for k := range runeMap(name) {
				s[k] = true
			}
		}
		return s
	}

	t.digit = runeMap("number/digit.tsv")
	t.zero = runeMap("number/zero.tsv")
	t.teen = runeMap("number/teen.tsv")
	t.sign = runeMap("number/sign.tsv")
	t.dot = runeMap("number/dot.tsv")
	t.month = trieOf("date/m.tsv", "date/mm.tsv")
	t.monthMM = trieOf("date/mm.tsv")
	t.day = trieOf("date/d.tsv", "date/dd.tsv")
	t.hour = trieOf("time/hour.tsv")
	t.minute = trieOf("time/minute.tsv")
	t.second = trieOf("time/second.tsv")
	t.noon = trieOf("time/noon.tsv")
	t.operator = trieOf("math/operator.tsv")
	t.unambiguous = trieOf("math/operator_unambiguous.tsv")
	t.currency = trieOf("money/code.tsv", "money/symbol.tsv")
	t.units = trieOf("measure/units_en.tsv", "measure/units_zh.tsv")
	t.phone = trieOf("cardinal/phone.tsv")
	t.whitelist = trieOf("default/whitelist.tsv", "erhua/whitelist.tsv")
	t.team = trieOf("sport/country.tsv", "sport/club.tsv")
	t.tradToSimple = runeToRune("char/traditional_to_simple.tsv")
	t.fullToHalf = runeToRune("char/fullwidth_to_halfwidth.tsv")
	t.puncts = runeSet("char/punctuations_zh.tsv")
	t.blacklist = runeSet("default/blacklist.tsv")
	if err != nil {
		return nil, err
	}
	// math.py's symbols, used between numbers like its operators.
	for _, kv := range [...][2]string{{"~", "到"}, {":", "比"}, {"<", "小于"}, {">", "大于"}} {
		t.operator.add(kv[0], kv[1])
	}
	first := make(map[rune]uint32)
	for k, tr := range []*trie{t.month, t.monthMM, t.day, t.hour, t.minute, t.second, t.noon,
		t.operator, t.unambiguous, t.currency, t.units, t.phone, t.whitelist, t.team} {
		tr.bit = 1 << k
		for _, c := range tr.first {
			first[c] |= tr.bit
		}
	}
	t.chars = make(map[rune]charInfo, len(first)+len(t.tradToSimple))
	for c, f := range first {
		t.chars[c] = charInfo{first: f, simpleFirst: f}
	}
	for c, sc := range t.tradToSimple {
		t.chars[c] = charInfo{simple: sc, first: first[c], simpleFirst: first[sc]}
	}
	return t, nil
}
