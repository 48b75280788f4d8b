package textnorm

import "strings"

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
