// Package zh is a Go port of WeTextProcessing's Chinese text normalization
// (tn.chinese.normalizer.Normalizer, release 1.2.0), configured as
// MOSS-TTS-Nano uses it: Normalizer(remove_interjections=False,
// remove_erhua=False, full_to_half=False) with the other options at their
// defaults (traditional_to_simple=True, remove_puncts=False, tag_oov=False).
//
// It turns written Chinese into the words a speaker says: "2008-08-08" →
// "二零零八年八月八日", "价格是￥13.5" → "价格是十三点五元", "10km/h" →
// "每小时十公里", "13501234567" → "幺三五零幺二三四五六七".
//
// Upstream builds weighted finite-state transducers with pynini: a union of
// taggers (date, whitelist, sport, fraction, measure, money, time, cardinal,
// math, char), each with a weight, repeated over the input; the cheapest
// tagging wins, its fields are put in a fixed order and verbalized, and a
// post-processor rewrites characters. This package ports the behaviour, not
// the machinery: each tagger is a hand-written matcher that offers every
// token it can read at a position with its weight and spoken form, and a
// shortest-path pass over the input positions picks the cheapest sequence,
// which is exactly the cost of the single-best path through upstream's
// tagger. Verbalization happens as tokens are offered, since every field
// order upstream uses is fixed per token type.
//
// Ties: when several taggings cost exactly the same, OpenFst keeps the one
// its search reaches first, which depends on the arc order of the compiled
// FST file rather than on the grammar. This package keeps, at each input
// position, the path whose last token starts earliest, and among tokens of
// one span the rule listed first. Real text rarely ties. A currency sign
// before a number with a unit ties (¥2个: money ¥2 + char 个, or char ¥ +
// measure 2个), and there this rule picks what upstream's 2023 compiled
// tagger picks (char ¥ + measure). A number prefix (约, 人均, a sign) before
// a hyphenated date ties too, and there it does not: 约2008-08-08 reads
// 约二零零八零八零八 here and 约两百八零八零八 with that tagger, both at cost
// 91.06 (math token 约2, 约20 or 约200, then a digit-by-digit cardinal
// xxxx-xxx-xxx); neither reads the date, as char(约) + date costs 101.02
// (context_test.go has the details).
//
// Deviations, for inputs no real text contains: a token may end inside a
// run of more than 32 digits only within its first 32 digits or at the run's
// end (upstream: anywhere), which keeps the parse linear in the input
// length; a backslash is kept as written (upstream's token parser mis-reads
// its escaped form and fails); invalid UTF-8 is read as U+FFFD.
//
// What MOSS-TTS-Nano does around its WeTextProcessing call is not part of
// this package: choosing zh or en (text_normalization_pipeline.py,
// resolve_text_normalization_language), rewriting hyphens before zh
// (_rewrite_hyphens_before_zh_wetext) and its robust normalizer
// (tts_robust_normalizer_single_script.py) before and after.
package zh

import "strings"

// Options are WeTextProcessing's Normalizer constructor arguments.
type Options struct {
	// RemoveInterjections deletes 呃 and 啊 (default/blacklist.tsv).
	RemoveInterjections bool
	// RemoveErhua drops an erhua 儿 (这儿 → 这) unless the word is in
	// erhua/whitelist.tsv (儿子, 婴儿, …).
	RemoveErhua bool
	// TraditionalToSimple maps traditional characters to simplified ones
	// before tagging.
	TraditionalToSimple bool
	// RemovePuncts deletes Chinese and ASCII punctuation.
	RemovePuncts bool
	// FullToHalf maps full-width letters, digits and punctuation to ASCII.
	FullToHalf bool
	// TagOOV wraps each character outside the national standard charset
	// (and ASCII) in <oov>…</oov>.
	TagOOV bool
}

// UpstreamDefaults are the defaults of WeTextProcessing's Normalizer, the
// options its own test suite runs with (plus TagOOV for normalizer.txt).
func UpstreamDefaults() Options {
	return Options{
		RemoveInterjections: true,
		RemoveErhua:         true,
		TraditionalToSimple: true,
		FullToHalf:          true,
	}
}

// MOSSOptions are the options MOSS-TTS-Nano's text_normalization_pipeline.py
// passes: interjections, erhua and full-width characters are kept.
func MOSSOptions() Options {
	return Options{TraditionalToSimple: true}
}

// Normalizer normalizes Chinese text. It is safe for concurrent use.
type Normalizer struct {
	opt Options
	t   *tables
}

// New returns a Normalizer configured as MOSS-TTS-Nano configures
// WeTextProcessing (MOSSOptions).
func New() *Normalizer { return NewWithOptions(MOSSOptions()) }

// NewWithOptions returns a Normalizer with the given options. The grammar
// tables are parsed once per process, on the first call.
func NewWithOptions(opt Options) *Normalizer {
	return &Normalizer{opt: opt, t: loadTables()}
}

// parser holds one input being normalized.
type parser struct {
	t        *tables
	opt      Options
	r        []rune
	digitRun []int32  // digitRun[i]: end of the digit run starting at i
	commaRun []int32  // the same, across commas between ASCII digits
	first    []uint32 // first[i]: the tries with a key starting with r[i]
	numBuf   []num    // scratch for nums, emptied at each position
}

func (n *Normalizer) newParser(s string) *parser {
	r := []rune(s) // invalid UTF-8 becomes U+FFFD
	p := &parser{t: n.t, opt: n.opt, r: r}
	p.digitRun = make([]int32, len(r)+1)
	p.commaRun = make([]int32, len(r)+1)
	p.first = make([]uint32, len(r)+1)
	for i, c := range r {
		info, ok := n.t.chars[c]
		switch {
		case !ok:
		case n.opt.TraditionalToSimple && info.simple != 0:
			r[i] = info.simple
			p.first[i] = info.simpleFirst
		default:
			p.first[i] = info.first
		}
	}
	p.digitRun[len(r)] = int32(len(r))
	p.commaRun[len(r)] = int32(len(r))
	for i := len(r) - 1; i >= 0; i-- {
		if !isDigit(r[i]) {
			p.digitRun[i], p.commaRun[i] = int32(i), int32(i)
			continue
		}
		p.digitRun[i] = int32(i + 1)
		p.commaRun[i] = int32(i + 1)
		if i+1 < len(r) && isDigit(r[i+1]) {
			p.digitRun[i] = p.digitRun[i+1]
			p.commaRun[i] = p.commaRun[i+1]
		} else if i+2 < len(r) && isComma(r[i+1]) && isASCIIDigit(r[i]) && isASCIIDigit(r[i+2]) {
			p.commaRun[i] = p.commaRun[i+2]
		}
	}
	return p
}

// step is the last token of the best path to a position.
type step struct {
	start int32
	char  bool  // the char rule: the spoken form is the input character
	math  int32 // a math chain token: out follows the links of state math; -1 otherwise
	out   string
}

// mathState is a point inside a math token where a number is expected: at
// the token's start or after an operator. Running number (op number)* as
// lattice states keeps long chains linear.
type mathState struct {
	cost int    // cost of the best path here, the math token's weight included
	from int32  // the math token's first position
	prev int32  // the state before the last link; -1 at the token's start
	link string // spoken number and operator of the link from prev
}

// lattice is the shortest-path pass over the input positions; it is the
// sink of the rules at the position being expanded.
type lattice struct {
	base int // cost of the best path to the current position
	cost []int
	back []step
	ms   []mathState
	from int32
}

const inf = int(^uint(0) >> 1)

func (l *lattice) want(end, w int) bool { return l.base+w < l.cost[end] }

func (l *lattice) put(end, w int, out string) {
	if c := l.base + w; c < l.cost[end] {
		l.cost[end] = c
		l.back[end] = step{start: l.from, math: -1, out: out}
	}
}

// run finds the cheapest tagging of p's input with the given rules, the math
// chain and the char fallback (either may be left out for rule tests).
func (n *Normalizer) run(p *parser, rs []rule, math, char bool) *lattice {
	size := len(p.r) + 1
	l := &lattice{cost: make([]int, size), back: make([]step, size)}
	for i := 1; i < size; i++ {
		l.cost[i] = inf
	}
	if math {
		l.ms = make([]mathState, size)
		for i := range l.ms {
			l.ms[i].cost = inf
		}
	}
	for i := range p.r {
		if l.cost[i] == inf && (!math || l.ms[i].cost == inf) {
			continue
		}
		l.base, l.from = l.cost[i], int32(i)
		p.numBuf = p.numBuf[:0]
		// Every rule but char starts with a number, a trie key, 儿 or 尾号;
		// most characters start none, and skipping them halves the time.
		c := p.r[i]
		mayStart := p.first[i] != 0 || startsNumber(c) || c == '儿' || c == '尾'
		if l.cost[i] != inf {
			if mayStart {
				for _, rule := range rs {
					rule(p, i, l)
				}
			}
			if char && l.base+wChar < l.cost[i+1] {
				l.cost[i+1] = l.base + wChar
				l.back[i+1] = step{start: int32(i), char: true, math: -1}
			}
		}
		if math && mayStart {
			l.mathStep(p, i)
		}
	}
	return l
}

// mathStep expands the math state at i: a new math token starting here, or
// the continuation of one after an operator, whichever is cheaper (the
// continuation on a tie, making one longer token).
func (l *lattice) mathStep(p *parser, i int) {
	if l.cost[i] != inf && l.cost[i]+wMath < l.ms[i].cost {
		l.ms[i] = mathState{cost: l.cost[i] + wMath, from: int32(i), prev: -1}
	}
	st := l.ms[i]
	if st.cost == inf {
		return
	}
	for _, n := range p.nums(i, false) {
		if st.cost < l.cost[n.end] {
			l.cost[n.end] = st.cost
			l.back[n.end] = step{start: st.from, math: int32(i), out: p.numString(n, false)}
		}
		p.match(p.t.operator, p.skipSpace(n.end), func(oe int, op string) {
			next := p.skipSpace(oe)
			if st.cost < l.ms[next].cost {
				l.ms[next] = mathState{cost: st.cost, from: st.from, prev: int32(i), link: p.numString(n, false) + op}
			}
		})
	}
}

// tokens returns the ends of the best path's tokens, first to last.
func (l *lattice) tokens() []int32 {
	var path []int32
	for e := int32(len(l.cost) - 1); e > 0; e = l.back[e].start {
		path = append(path, e)
	}
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	return path
}

// spoken returns the spoken form of the token ending at e.
func (l *lattice) spoken(p *parser, e int32) string {
	st := l.back[e]
	switch {
	case st.char:
		return string(p.r[st.start])
	case st.math >= 0:
		var links []string
		for q := st.math; l.ms[q].prev >= 0; q = l.ms[q].prev {
			links = append(links, l.ms[q].link)
		}
		var b strings.Builder
		for k := len(links) - 1; k >= 0; k-- {
			b.WriteString(links[k])
		}
		b.WriteString(st.out)
		return b.String()
	}
	return st.out
}

// Normalize returns the spoken form of s.
func (n *Normalizer) Normalize(s string) string {
	if s == "" {
		return ""
	}
	p := n.newParser(s)
	l := n.run(p, rules, true, true)
	var b strings.Builder
	b.Grow(len(s) * 2)
	for _, e := range l.tokens() {
		st := l.back[e]
		if st.char {
			n.writePost(&b, p.r[st.start:st.start+1])
		} else {
			n.writePost(&b, []rune(l.spoken(p, e)))
		}
	}
	return b.String()
}

// writePost writes spoken text through the post-processor: interjection and
// punctuation removal, full-to-half width, OOV tags, each character alone.
func (n *Normalizer) writePost(b *strings.Builder, rs []rune) {
	o := &n.opt
	for _, c := range rs {
		if o.RemoveInterjections && n.t.blacklist[c] {
			continue
		}
		if o.RemovePuncts && (n.t.puncts[c] || isASCIIPunct(c)) {
			continue
		}
		if o.FullToHalf {
			if h, ok := n.t.fullToHalf[c]; ok {
				c = h
			}
		}
		if o.TagOOV && !n.inCharset(c) {
			b.WriteString("<oov>")
			b.WriteRune(c)
			b.WriteString("</oov>")
			continue
		}
		b.WriteRune(c)
	}
}

func isASCIIPunct(c rune) bool {
	return c < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c)
}

// inCharset reports whether c is known to the OOV tagger: the 2013 national
// standard charset and its extension, Chinese punctuation, and ASCII
// letters, digits, punctuation and spaces.
func (n *Normalizer) inCharset(c rune) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', isASCIIDigit(c), isASCIIPunct(c):
		return true
	case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f', c == '\u00a0':
		return true
	}
	return n.t.oovCharset()[c] || n.t.puncts[c]
}
