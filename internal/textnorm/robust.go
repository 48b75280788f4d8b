package textnorm

import (
	"strconv"
	"strings"
)

// NormalizeTTSText is stage 1, OpenMOSS's normalize_tts_text
// (tts_robust_normalizer_single_script.py): a non-semantic cleanup that
// protects URLs, e-mail addresses, mentions, hashtags, file names and
// versions, strips light Markdown, turns line breaks, arrows, dashes and
// bracket pairs into pauses or quotes, collapses punctuation runs, fixes
// spacing per script and makes every line end in punctuation.
//
// The output equals the reference's for every valid UTF-8 input, but for
// the bounded placeholder restore the package doc describes; invalid bytes
// are read as U+FFFD first (Python never sees them: its str holds code
// points). Each rule is a hand-written scanner that follows Python re's
// leftmost, non-overlapping, backtracking semantics, in linear time.
func NormalizeTTSText(text string) string {
	return normalizeTTSText(text, false)
}

// normalizeTTSText is NormalizeTTSText; exact forces the reference's chain
// of replacements when restoring placeholders, for the tests that check the
// one-pass restore against it.
func normalizeTTSText(text string, exact bool) string {
	s := []rune(text)
	s = baseCleanup(s)
	s = markdownAndLines(s)
	s = flowArrows(s)
	s, prot := protectSpans(s)
	prot.exact = prot.exact || exact
	s = visibleUnderscores(s)
	s = normalizeSpaces(s)
	s = structuralPunctuation(s)
	s = repeatedPunctuation(s)
	s = normalizeSpaces(s)
	out := prot.restore(s)
	return terminalByLine(out)
}

// hasPrefix reports whether s[i:] starts with p (ASCII).
func hasPrefix(s []rune, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if s[i+k] != rune(p[k]) {
			return false
		}
	}
	return true
}

// containsRune reports whether r occurs in s.
func containsRune(s []rune, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// containsASCII reports whether the ASCII string p occurs in s.
func containsASCII(s []rune, p string) bool {
	for i := 0; i+len(p) <= len(s); i++ {
		if s[i] == rune(p[0]) && hasPrefix(s, i, p) {
			return true
		}
	}
	return false
}

// skipSpace returns the first index at or after i that is not \s.
func skipSpace(s []rune, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// editor builds an edited copy of s lazily: the runes between edits are
// copied in bulk, and when nothing changes s itself is the result.
type editor struct {
	s    []rune
	out  []rune
	last int // s[:last] has been dealt with
}

// at returns the output with s[last:i] appended, ready for a replacement of
// s[i:j]; the caller appends the replacement to it, stores it in out and
// sets last to j.
func (e *editor) at(i int) []rune {
	if e.out == nil {
		e.out = make([]rune, 0, len(e.s)+len(e.s)/8+16)
	}
	return append(e.out, e.s[e.last:i]...)
}

// result returns the edited text.
func (e *editor) result() []rune {
	if e.out == nil {
		return e.s
	}
	return append(e.out, e.s[e.last:]...)
}

// runCache answers "where does the run of class in that starts at u end, and
// where in it is the last rune satisfying mark" for queries whose u never
// decreases, scanning every rune once: a run has no stop inside, so every u
// in [from, end] shares its end.
type runCache struct {
	in       func(rune) bool
	mark     func(rune) bool // may be nil
	from     int
	end      int
	lastMark int // index of the last marked rune in [from, end), or -1
}

func newRunCache(in, mark func(rune) bool) runCache {
	return runCache{in: in, mark: mark, from: 1, end: 0, lastMark: -1}
}

// at returns the end of the run starting at u and the last marked index in
// it (-1 if none; a caller asks whether it is ≥ u).
func (c *runCache) at(s []rune, u int) (end, lastMark int) {
	if u >= c.from && u <= c.end {
		return c.end, c.lastMark
	}
	e, last := u, -1
	for e < len(s) && c.in(s[e]) {
		if c.mark != nil && c.mark(s[e]) {
			last = e
		}
		e++
	}
	c.from, c.end, c.lastMark = u, e, last
	return e, last
}

// placeholderAt returns the end of `___PROT\d+___` at s[i:], or -1. The \d is
// re's Unicode \d, as in the reference's _PROT.
func placeholderAt(s []rune, i int) int {
	if !hasPrefix(s, i, "___PROT") {
		return -1
	}
	d := i + 7
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	if d == i+7 || !hasPrefix(s, d, "___") {
		return -1
	}
	return d + 3
}

// ---- _base_cleanup ----

// baseCleanup turns CR LF and CR into LF and U+3000 into a space, then drops
// every rune of category C except LF and tab (zero-width spaces and the BOM
// included).
func baseCleanup(s []rune) []rune {
	out := s[:0] // never longer than s
	for i := 0; i < len(s); i++ {
		r := s[i]
		switch {
		case r == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			r = '\n'
		case r == '\u3000':
			r = ' '
		}
		if r == '\n' || r == '\t' || r == ' ' || !isOther(r) {
			out = append(out, r)
		}
	}
	return out
}

// ---- _normalize_markdown_and_lines ----

// isLineBreak is a boundary of Python's str.splitlines.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// markdownAndLines rewrites Markdown links `[text](http…)` as `text http…`,
// drops heading, quote and list markers, skips blank lines and joins the
// lines, ending each but the last with punctuation.
func markdownAndLines(s []rune) []rune {
	s = markdownLinks(s)
	var lines [][]rune
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && !isLineBreak(s[i]) {
			continue
		}
		line := trimSpace(s[start:i])
		if i < len(s) && s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		start = i + 1
		if len(line) == 0 {
			continue
		}
		lines = append(lines, stripLineMarkers(line))
	}
	if len(lines) == 0 {
		return nil
	}
	out := make([]rune, 0, len(s)+len(lines))
	for k, line := range lines {
		if k < len(lines)-1 {
			line = ensureTerminal(line)
		}
		out = append(out, line...)
	}
	return out
}

// markdownLinks is re.sub(r"\[([^\[\]]+?)\]\((https?://[^)\s]+)\)", r"\1 \2").
func markdownLinks(s []rune) []rune {
	if !containsRune(s, '[') {
		return s
	}
	urlRun := newRunCache(func(r rune) bool { return r != ')' && !isSpace(r) }, nil)
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if s[i] != '[' {
			i++
			continue
		}
		// The lazy group cannot hold a bracket, so it ends at the first one.
		j := i + 1
		for j < len(s) && s[j] != '[' && s[j] != ']' {
			j++
		}
		if j < len(s) && s[j] == ']' && j > i+1 && j+1 < len(s) && s[j+1] == '(' && hasPrefix(s, j+2, "http") {
			u := j + 6
			if u < len(s) && s[u] == 's' {
				u++
			}
			if hasPrefix(s, u, "://") {
				u += 3
				if e, _ := urlRun.at(s, u); e > u && e < len(s) && s[e] == ')' {
					out := append(ed.at(i), s[i+1:j]...)
					out = append(out, ' ')
					ed.out = append(out, s[j+2:e]...)
					ed.last = e + 1
					i = e + 1
					continue
				}
			}
		}
		i++
	}
	return ed.result()
}

// stripLineMarkers applies, in order, the reference's four anchored
// substitutions on a stripped line: `^#{1,6}\s+`, `^>\s+`, `^[-*+]\s+` and
// `^\d+[.)]\s+`.
func stripLineMarkers(line []rune) []rune {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n >= 1 && n <= 6 && n < len(line) && isSpace(line[n]) {
		line = line[skipSpace(line, n):]
	}
	if len(line) >= 2 && line[0] == '>' && isSpace(line[1]) {
		line = line[skipSpace(line, 1):]
	}
	if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && isSpace(line[1]) {
		line = line[skipSpace(line, 1):]
	}
	n = 0
	for n < len(line) && isDigit(line[n]) {
		n++
	}
	if n >= 1 && n+1 < len(line) && (line[n] == '.' || line[n] == ')') && isSpace(line[n+1]) {
		line = line[skipSpace(line, n+1):]
	}
	return line
}

// isTrailingCloser is the reference's _TRAILING_CLOSERS.
func isTrailingCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '）', '】', '》', '〉', '」', '』', '”', '’':
		return true
	}
	return false
}

// ensureTerminal appends "。" unless the text, ignoring trailing space and
// closing quotes or brackets, already ends in punctuation (category P).
func ensureTerminal(s []rune) []rune {
	if len(s) == 0 {
		return s
	}
	i := len(s) - 1
	for i >= 0 && isSpace(s[i]) {
		i--
	}
	for i >= 0 && isTrailingCloser(s[i]) {
		i--
	}
	if i >= 0 && isPunct(s[i]) {
		return s
	}
	return append(s[:len(s):len(s)], '。')
}

// terminalByLine is text.strip() followed by
// _ensure_terminal_punctuation_by_line.
func terminalByLine(text string) string {
	text = strings.TrimFunc(text, isSpace)
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for k, line := range lines {
		l := trimSpace([]rune(line))
		if len(l) == 0 {
			lines[k] = ""
			continue
		}
		lines[k] = string(ensureTerminal(l))
	}
	return strings.TrimFunc(strings.Join(lines, "\n"), isSpace)
}

// ---- _normalize_flow_arrows ----

// isArrowRune is the single-character arrow class of the reference.
func isArrowRune(r rune) bool {
	switch r {
	case '→', '←', '↔', '⇒', '⇐', '⇔', '⟶', '⟵', '⟷', '⟹', '⟸', '⟺', '↦', '↤', '↪', '↩':
		return true
	}
	return false
}

func isArrowShaft(r rune) bool { return r == '-' || r == '=' }

// arrowAt returns the end of `<[-=]+>|[-=]+>|<[-=]+|[→…]` at s[i:], or -1.
// A failed `[-=]+>` also reports the end of the shaft run so the caller can
// skip it: every start inside the run fails the same way.
func arrowAt(s []rune, i int) (end, skip int) {
	if i >= len(s) {
		return -1, i
	}
	r := s[i]
	switch {
	case r == '<':
		j := i + 1
		for j < len(s) && isArrowShaft(s[j]) {
			j++
		}
		if j == i+1 {
			return -1, i + 1
		}
		if j < len(s) && s[j] == '>' {
			return j + 1, 0
		}
		return j, 0
	case isArrowShaft(r):
		j := i
		for j < len(s) && isArrowShaft(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '>' {
			return j + 1, 0
		}
		return -1, j
	case isArrowRune(r):
		return i + 1, 0
	}
	return -1, i + 1
}

// flowArrows is re.sub(r"\s*(?:<[-=]+>|[-=]+>|<[-=]+|[→←…])\s*", "，").
func flowArrows(s []rune) []rune {
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		j := skipSpace(s, i)
		end, skip := arrowAt(s, j)
		if end >= 0 {
			ed.out = append(ed.at(i), '，')
			i = skipSpace(s, end)
			ed.last = i
			continue
		}
		// Every start in [i, skip) fails: the spaces lead to the same
		// failed arrow, and so does every rune of a failed shaft.
		if skip <= i {
			skip = i + 1
		}
		if skip > len(s) {
			skip = len(s)
		}
		i = skip
	}
	return ed.result()
}

// ---- _protect_spans / _restore_spans ----

// protected holds the spans replaced by `___PROT<n>___` placeholders.
type protected struct {
	spans []string
	// exact is set when the one-pass restore might differ from the
	// reference's chain of str.replace calls (see restore).
	exact bool
}

func (p *protected) add(out []rune, span []rune) []rune {
	out = append(out, '_', '_', '_', 'P', 'R', 'O', 'T')
	for _, b := range strconv.Itoa(len(p.spans)) {
		out = append(out, b)
	}
	p.spans = append(p.spans, string(span))
	return append(out, '_', '_', '_')
}

// restore puts the protected spans back, as the reference does with one
// str.replace per placeholder in index order.
//
// That chain re-expands placeholders that a later span swallowed only when
// the inner index is larger, and can match placeholders that a user's own
// "PROT" text or a mention cut at 32 characters forged. Neither can happen
// when no "PROT" reached the protection step and no capped mention ran into
// one; then a single left-to-right pass that expands each placeholder once
// (not recursively) gives the same string in linear time.
//
// Otherwise the chain runs as written, within limits: it costs a scan of
// the text per placeholder, and user-typed placeholders nested in protected
// tokens make it grow exponentially (each round can multiply the copies of
// the next placeholder), which in the reference exhausts memory. Past
// maxRestoreScan scanned bytes or an output longer than maxRestoreGrowth
// times the input (plus slack), the port gives up on the chain and returns
// the one-pass result instead: a deliberate difference, only for such input.
func (p *protected) restore(s []rune) string {
	if len(p.spans) == 0 {
		return string(s)
	}
	if p.exact {
		if out, ok := p.restoreChain(s); ok {
			return out
		}
	}
	return p.restoreOnePass(s)
}

// Bounds of restoreChain.
const (
	maxRestoreScan   = 64 << 20
	maxRestoreGrowth = 16
)

// restoreChain is the reference's chain of str.replace calls; ok is false
// when it would exceed the bounds above.
func (p *protected) restoreChain(s []rune) (out string, ok bool) {
	text := string(s)
	limit := maxRestoreGrowth*len(text) + 4096
	scanned := 0
	for idx, span := range p.spans {
		scanned += len(text)
		if scanned > maxRestoreScan {
			return "", false
		}
		ph := "___PROT" + strconv.Itoa(idx) + "___"
		n := strings.Count(text, ph)
		if n == 0 {
			continue
		}
		if len(text)+n*(len(span)-len(ph)) > limit {
			return "", false
		}
		text = strings.ReplaceAll(text, ph, span)
	}
	return text, true
}

// restoreOnePass expands each placeholder of s once, left to right.
func (p *protected) restoreOnePass(s []rune) string {
	var b strings.Builder
	b.Grow(len(s) + 16*len(p.spans))
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && hasPrefix(s, i, "___PROT") {
			d, v := i+7, 0
			for d < len(s) && s[d] >= '0' && s[d] <= '9' && v <= len(p.spans) {
				v = v*10 + int(s[d]-'0')
				d++
			}
			if d > i+7 && hasPrefix(s, d, "___") && v < len(p.spans) && strconv.Itoa(v) == string(s[i+7:d]) {
				b.WriteString(p.spans[v])
				i = d + 2
				continue
			}
		}
		b.WriteRune(s[i])
	}
	return b.String()
}

// protectSpans replaces, pattern by pattern, the reference's high-risk
// tokens with placeholders. Each later pattern sees the placeholders the
// earlier ones left, as in the reference.
func protectSpans(s []rune) ([]rune, *protected) {
	p := &protected{exact: containsASCII(s, "PROT")}
	s = protectURLs(s, p)
	s = protectEmails(s, p)
	s = protectMentions(s, p)
	s = protectReddit(s, p)
	s = protectHashtags(s, p)
	s = protectDotTokens(s, p)
	s = protectFileLike(s, p)
	return s, p
}

// protectURLs is _URL_RE: `https?://[^\s\u3000，。！？；、）】》〉」』]+`.
func protectURLs(s []rune, p *protected) []rune {
	if !containsASCII(s, "http") {
		return s
	}
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if s[i] == 'h' && hasPrefix(s, i, "http") {
			u := i + 4
			if u < len(s) && s[u] == 's' {
				u++
			}
			if hasPrefix(s, u, "://") {
				u += 3
				e := u
				for e < len(s) && !isURLStop(s[e]) {
					e++
				}
				if e > u {
					ed.out = p.add(ed.at(i), s[i:e])
					ed.last = e
					i = e
					continue
				}
			}
		}
		i++
	}
	return ed.result()
}

// isURLStop is the complement of _URL_RE's run class.
func isURLStop(r rune) bool {
	switch r {
	case '\u3000', '，', '。', '！', '？', '；', '、', '）', '】', '》', '〉', '」', '』':
		return true
	}
	return isSpace(r)
}

func isEmailLocal(r rune) bool {
	return isASCIIAlnum(r) || r == '.' || r == '_' || r == '%' || r == '+' || r == '-'
}

func isEmailDomain(r rune) bool {
	return isASCIIAlnum(r) || r == '.' || r == '-'
}

// protectEmails is _EMAIL_RE:
// `(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?![\w.-])`.
//
// The local part cannot hold '@', so it is the whole run up to the '@'. The
// domain must end where its run ends (a shorter end would be followed by a
// run rune, which the lookahead rejects), so it matches iff the run ends in
// `.` and two or more letters with at least one rune before the dot.
func protectEmails(s []rune, p *protected) []rune {
	if !containsRune(s, '@') {
		return s
	}
	local := newRunCache(isEmailLocal, nil)
	domain := newRunCache(isEmailDomain, func(r rune) bool { return !isASCIILetter(r) })
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if isEmailLocal(s[i]) && (i == 0 || !(isWord(s[i-1]) || s[i-1] == '.' || s[i-1] == '+' || s[i-1] == '-')) {
			if a, _ := local.at(s, i); a < len(s) && s[a] == '@' {
				r, lastNonLetter := domain.at(s, a+1)
				q := lastNonLetter + 1 // start of the trailing letters
				if lastNonLetter >= a+2 && s[lastNonLetter] == '.' && r-q >= 2 && (r == len(s) || !isWord(s[r])) {
					ed.out = p.add(ed.at(i), s[i:r])
					ed.last = r
					i = r
					continue
				}
			}
		}
		i++
	}
	return ed.result()
}

// protectMentions is _MENTION_RE: `(?<![A-Za-z0-9_])@[A-Za-z0-9_]{1,32}`.
func protectMentions(s []rune, p *protected) []rune {
	if !containsRune(s, '@') {
		return s
	}
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if s[i] == '@' && (i == 0 || !isASCIIWord(s[i-1])) {
			e := i + 1
			for e < len(s) && e-i-1 < 32 && isASCIIWord(s[e]) {
				e++
			}
			if e > i+1 {
				if e < len(s) && isASCIIWord(s[e]) && !p.exact {
					// Capped: the placeholder it may cut could later
					// match where the one-pass restore would not.
					f := e
					for f < len(s) && isASCIIWord(s[f]) {
						f++
					}
					p.exact = containsASCII(s[i:f], "PROT")
				}
				ed.out = p.add(ed.at(i), s[i:e])
				ed.last = e
				i = e
				continue
			}
		}
		i++
	}
	return ed.result()
}

// protectReddit is _REDDIT_RE: `(?<![A-Za-z0-9_])(?:u|r)/[A-Za-z0-9_]+`.
func protectReddit(s []rune, p *protected) []rune {
	if !containsRune(s, '/') {
		return s
	}
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if (s[i] == 'u' || s[i] == 'r') && (i == 0 || !isASCIIWord(s[i-1])) && i+1 < len(s) && s[i+1] == '/' {
			e := i + 2
			for e < len(s) && isASCIIWord(s[e]) {
				e++
			}
			if e > i+2 {
				ed.out = p.add(ed.at(i), s[i:e])
				ed.last = e
				i = e
				continue
			}
		}
		i++
	}
	return ed.result()
}

// protectHashtags is _HASHTAG_RE: `(?<![A-Za-z0-9_])#(?!\s)[^\s#]+`.
func protectHashtags(s []rune, p *protected) []rune {
	if !containsRune(s, '#') {
		return s
	}
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if s[i] == '#' && (i == 0 || !isASCIIWord(s[i-1])) {
			e := i + 1
			for e < len(s) && s[e] != '#' && !isSpace(s[e]) {
				e++
			}
			if e > i+1 {
				ed.out = p.add(ed.at(i), s[i:e])
				ed.last = e
				i = e
				continue
			}
		}
		i++
	}
	return ed.result()
}

func isDotTokenRune(r rune) bool {
	return isASCIIAlnum(r) || r == '.' || r == '_' || r == '-'
}

// protectDotTokens is _DOT_TOKEN_RE:
// `(?<![A-Za-z0-9_])\.(?=[A-Za-z0-9._-]*[A-Za-z0-9])[A-Za-z0-9._-]+`.
func protectDotTokens(s []rune, p *protected) []rune {
	if !containsRune(s, '.') {
		return s
	}
	run := newRunCache(isDotTokenRune, isASCIIAlnum)
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if s[i] == '.' && (i == 0 || !isASCIIWord(s[i-1])) {
			if e, lastAlnum := run.at(s, i+1); lastAlnum >= i+1 {
				ed.out = p.add(ed.at(i), s[i:e])
				ed.last = e
				i = e
				continue
			}
		}
		i++
	}
	return ed.result()
}

// isFileRune is the class [A-Za-z0-9._/+:-] of _FILELIKE_RE and _LATINISH
// ('_' included: ". _ /" are three members).
func isFileRune(r rune) bool {
	return isASCIIWord(r) || isFileSep(r)
}

// isFileSep is the class [./+:-].
func isFileSep(r rune) bool {
	return r == '.' || r == '/' || r == '+' || r == ':' || r == '-'
}

// protectFileLike is _FILELIKE_RE:
//
//	(?<![A-Za-z0-9_])(?=[A-Za-z0-9._/+:-]*[A-Za-z])(?=[A-Za-z0-9._/+:-]*[./+:-])
//	[A-Za-z0-9][A-Za-z0-9._/+:-]*(?![A-Za-z0-9_])
//
// Both lookaheads ask whether the run from the start holds a letter and a
// separator. The run's class covers [A-Za-z0-9_], so the final lookahead
// always holds at the run's end and the greedy body takes the whole run.
// Placeholders are made of the class too: a run that swallows one protects
// it a second time, and the reference then leaks the inner placeholder
// (restore explains why); the port does the same.
func protectFileLike(s []rune, p *protected) []rune {
	run := newRunCache(isFileRune, isASCIILetter)
	seps := newRunCache(isFileRune, isFileSep)
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if isASCIIAlnum(s[i]) && (i == 0 || !isASCIIWord(s[i-1])) {
			r, lastLetter := run.at(s, i)
			_, lastSep := seps.at(s, i)
			if lastLetter >= i && lastSep >= i {
				ed.out = p.add(ed.at(i), s[i:r])
				ed.last = r
				i = r
				continue
			}
		}
		i++
	}
	return ed.result()
}

// ---- _normalize_visible_underscores ----

// visibleUnderscores turns '_' into a space outside placeholders, which
// re.split finds leftmost and non-overlapping.
func visibleUnderscores(s []rune) []rune {
	i := 0
	for i < len(s) {
		if s[i] != '_' {
			i++
			continue
		}
		if e := placeholderAt(s, i); e >= 0 {
			i = e
			continue
		}
		s[i] = ' '
		i++
	}
	return s
}

// ---- _normalize_spaces ----

// normalizeSpaces is the reference's _normalize_spaces: one space for any
// run of ASCII blanks, none inside CJK text or between CJK and digits, one
// between CJK and Latin tokens, none around CJK punctuation or before ASCII
// punctuation.
func normalizeSpaces(s []rune) []rune {
	s = collapseBlanks(s)
	s = dropSpaceBetween(s, isCJK, isCJK)
	s = dropSpaceBetween(s, isCJK, isDigit)
	s = dropSpaceBetween(s, isDigit, isCJK)
	s = spaceAfterCJK(s)
	s = spaceBeforeCJK(s)
	s = collapseSpaces(s)
	s = dropSpaceBefore(s, func(r rune) bool {
		switch r {
		case '，', '。', '！', '？', '；', '：', '、', '”', '’', '」', '』', '】', '）', '》':
			return true
		}
		return false
	})
	s = dropSpaceAfter(s, func(r rune) bool {
		switch r {
		case '（', '【', '「', '『', '《', '“', '‘':
			return true
		}
		return false
	})
	s = dropSpaceAfter(s, func(r rune) bool {
		switch r {
		case '，', '。', '！', '？', '；', '：', '、':
			return true
		}
		return false
	})
	s = dropSpaceBefore(s, func(r rune) bool {
		switch r {
		case ',', '.', ';', '!', '?':
			return true
		}
		return false
	})
	s = collapseSpaces(s)
	return trimSpace(s)
}

// collapseBlanks is re.sub(r"[ \t\r\f\v]+", " ").
func collapseBlanks(s []rune) []rune {
	out := s[:0] // never longer than s
	inRun := false
	for _, r := range s {
		blank := r == ' ' || r == '\t' || r == '\r' || r == '\f' || r == '\v'
		switch {
		case blank && inRun:
		case blank:
			out = append(out, ' ')
		default:
			out = append(out, r)
		}
		inRun = blank
	}
	return out
}

// collapseSpaces is re.sub(r" {2,}", " ").
func collapseSpaces(s []rune) []rune {
	out := s[:0] // never longer than s
	prevSpace := false
	for _, r := range s {
		if r == ' ' && prevSpace {
			continue
		}
		prevSpace = r == ' '
		out = append(out, r)
	}
	return out
}

// dropSpaceBetween is re.sub(r"(A)\s+(?=B)", r"\1"). Only whitespace
// runs change, so the scan looks at the runes around each run.
func dropSpaceBetween(s []rune, a, b func(rune) bool) []rune {
	ed := editor{s: s}
	for i := 1; i < len(s); i++ {
		if !isSpace(s[i]) {
			continue
		}
		j := skipSpace(s, i)
		if j < len(s) && a(s[i-1]) && b(s[j]) {
			ed.out = ed.at(i)
			ed.last = j
		}
		i = j
	}
	return ed.result()
}

// latinishAt returns the end of _LATINISH's second alternative at s[i:]
// (`(?=[A-Za-z0-9._/+:-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9._/+:-]*`, greedy),
// or -1.
func latinishAt(s []rune, i int, c *runCache) int {
	if i >= len(s) || !isASCIIAlnum(s[i]) {
		return -1
	}
	e, lastLetter := c.at(s, i)
	if lastLetter < i {
		return -1
	}
	return e
}

// spaceAfterCJK is re.sub(rf"({_CJK})(?=({_LATINISH}))", r"\1 ").
func spaceAfterCJK(s []rune) []rune {
	c := newRunCache(isFileRune, isASCIILetter)
	var out []rune
	for i, r := range s {
		if isCJK(r) && i+1 < len(s) && (placeholderAt(s, i+1) >= 0 || latinishAt(s, i+1, &c) >= 0) {
			if out == nil {
				out = make([]rune, 0, len(s)+8)
				out = append(out, s[:i]...)
			}
			out = append(out, r, ' ')
			continue
		}
		if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return s
	}
	return out
}

// spaceBeforeCJK is re.sub(rf"(({_LATINISH}))(?={_CJK})", r"\1 "). A run
// of the class can only be followed by CJK at its end, so a match is the
// whole greedy run.
func spaceBeforeCJK(s []rune) []rune {
	c := newRunCache(isFileRune, isASCIILetter)
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		if !isASCIIWord(s[i]) { // neither alternative starts here
			i++
			continue
		}
		e := placeholderAt(s, i)
		if e < 0 || e >= len(s) || !isCJK(s[e]) {
			e = latinishAt(s, i, &c)
		}
		if e >= 0 && e < len(s) && isCJK(s[e]) {
			ed.out = append(ed.at(e), ' ')
			ed.last = e
			i = e
			continue
		}
		i++
	}
	return ed.result()
}

// dropSpaceBefore is re.sub(r"\s+([set])", r"\1").
func dropSpaceBefore(s []rune, set func(rune) bool) []rune {
	ed := editor{s: s}
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			continue
		}
		j := skipSpace(s, i)
		if j < len(s) && set(s[j]) {
			ed.out = ed.at(i)
			ed.last = j
		}
		i = j
	}
	return ed.result()
}

// dropSpaceAfter is re.sub(r"([set])\s+", r"\1") (or \s*, the same).
func dropSpaceAfter(s []rune, set func(rune) bool) []rune {
	ed := editor{s: s}
	for i := 1; i < len(s); i++ {
		if !isSpace(s[i]) {
			continue
		}
		j := skipSpace(s, i)
		if set(s[i-1]) {
			ed.out = ed.at(i)
			ed.last = j
		}
		i = j
	}
	return ed.result()
}

// ---- _normalize_structural_punctuation ----

// structuralPunctuation turns bracket pairs into double quotes, unwraps
// stand-alone 《titles》, turns arrows into "，" and dash runs into "。".
func structuralPunctuation(s []rune) []rune {
	s = quoteBrackets(s, func(r rune) bool { return r == '[' }, func(r rune) bool { return r == ']' }, true)
	s = quoteBrackets(s, func(r rune) bool { return r == '{' }, func(r rune) bool { return r == '}' }, true)
	s = quoteBrackets(s, isCornerOpen, isCornerClose, false)
	s = standaloneTitles(s)
	s = flowArrows(s)
	return dashRuns(s)
}

func isCornerOpen(r rune) bool  { return r == '【' || r == '〖' || r == '『' || r == '「' }
func isCornerClose(r rune) bool { return r == '】' || r == '〗' || r == '』' || r == '」' }

// quoteBrackets is re.sub(r"O\s*([^…]+?)\s*C", r'"\1"'), where the group's
// class excludes the closers and, if openExcluded, the openers too. The
// group is the content stripped of \s, or its last rune when the content is
// all space (the leading \s* gives one back).
func quoteBrackets(s []rune, open, close func(rune) bool, openExcluded bool) []rune {
	ed := editor{s: s}
	noCloseAfter := len(s) + 1 // no closer at or after this index
	i := 0
	for i < len(s) {
		if !open(s[i]) || i+1 >= noCloseAfter {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && !close(s[j]) && !(openExcluded && open(s[j])) {
			j++
		}
		if j == len(s) {
			noCloseAfter = i + 1
		}
		if j == len(s) || !close(s[j]) || j == i+1 {
			i++
			continue
		}
		content := s[i+1 : j]
		group := trimSpace(content)
		if len(group) == 0 {
			group = content[len(content)-1:]
		}
		out := append(ed.at(i), '"')
		out = append(out, group...)
		ed.out = append(out, '"')
		i = j + 1
		ed.last = i
	}
	return ed.result()
}

// isSentenceEnd is the class [。！？!?；;] before a stand-alone title.
func isSentenceEnd(r rune) bool {
	switch r {
	case '。', '！', '？', '!', '?', '；', ';':
		return true
	}
	return false
}

func isDash(r rune) bool { return r == '—' || r == '–' || r == '―' || r == '-' }

// standaloneTitles is
//
//	re.sub(r"(^|[。！？!?；;]\s*)《([^》]+)》(?=\s*(?:___PROT\d+___|[—–―-]{2,}|$|[。！？!?；;，,]))", r"\1\2")
//
// that is: a 《title》 at the start or after a sentence end, followed by the
// end, a placeholder, a dash run or a sentence or clause end, loses its
// brackets.
func standaloneTitles(s []rune) []rune {
	if !containsRune(s, '《') {
		return s
	}
	closeRun := newRunCache(func(r rune) bool { return r != '》' }, nil)
	title := func(p int) int { // index of 》 for a title opening at p, or -1
		if p >= len(s) || s[p] != '《' {
			return -1
		}
		k, _ := closeRun.at(s, p+1)
		if k >= len(s) || k == p+1 {
			return -1
		}
		q := skipSpace(s, k+1)
		switch {
		case q == len(s), placeholderAt(s, q) >= 0:
		case isDash(s[q]) && q+1 < len(s) && isDash(s[q+1]):
		case isSentenceEnd(s[q]) || s[q] == '，' || s[q] == ',':
		default:
			return -1
		}
		return k
	}
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		p, k := i, -1
		if i == 0 {
			k = title(0)
		}
		if k < 0 && isSentenceEnd(s[i]) {
			p = skipSpace(s, i+1)
			k = title(p)
		}
		if k < 0 {
			i++
			continue
		}
		// Keep s[i:p], the sentence end and spaces; drop 《 and 》.
		ed.out = append(ed.at(p), s[p+1:k]...)
		i = k + 1
		ed.last = i
	}
	return ed.result()
}

// dashRuns is re.sub(r"\s*(?:—|–|―|-){2,}\s*", "。").
func dashRuns(s []rune) []rune {
	ed := editor{s: s}
	i := 0
	for i < len(s) {
		j := skipSpace(s, i)
		d := j
		for d < len(s) && isDash(s[d]) {
			d++
		}
		if d-j >= 2 {
			ed.out = append(ed.at(i), '。')
			i = skipSpace(s, d)
			ed.last = i
			continue
		}
		if j == i {
			j = i + 1
		}
		i = j
	}
	return ed.result()
}

// ---- _normalize_repeated_punctuation ----

// repeatedPunctuation collapses ellipses and runs of the same or mixed
// sentence punctuation.
func repeatedPunctuation(s []rune) []rune {
	s = collapseRuns(s, '.', '.', 3, '。')
	s = collapseRuns(s, '…', '…', 2, '。')
	s = collapseRuns(s, '。', '．', 2, '。')
	s = collapseRuns(s, '，', ',', 2, '，')
	s = collapseRuns(s, '!', '！', 2, '！')
	s = collapseRuns(s, '?', '？', 2, '？')
	return collapseMixedQE(s)
}

// collapseRuns replaces every maximal run of at least min runes a or b with
// repl.
func collapseRuns(s []rune, a, b rune, min int, repl rune) []rune {
	in := func(r rune) bool { return r == a || r == b }
	out := s[:0]
	i := 0
	for i < len(s) {
		if !in(s[i]) {
			out = append(out, s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && in(s[j]) {
			j++
		}
		if j-i >= min {
			out = append(out, repl)
		} else {
			out = append(out, s[i:j]...)
		}
		i = j
	}
	return out
}

// collapseMixedQE is re.sub(r"[!?！？]{2,}", _mixed_qe).
func collapseMixedQE(s []rune) []rune {
	out := s[:0]
	i := 0
	for i < len(s) {
		r := s[i]
		if r != '!' && r != '?' && r != '！' && r != '？' {
			out = append(out, r)
			i++
			continue
		}
		j, q, e := i, false, false
		for j < len(s) {
			switch s[j] {
			case '?', '？':
				q = true
			case '!', '！':
				e = true
			default:
				goto done
			}
			j++
		}
	done:
		switch {
		case j-i < 2:
			out = append(out, s[i:j]...)
		case q && e:
			out = append(out, '？', '！')
		case q:
			out = append(out, '？')
		default:
			out = append(out, '！')
		}
		i = j
	}
	return out
}
