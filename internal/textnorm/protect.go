package textnorm

import (
	"strconv"
	"strings"
)

// ---- _protect_spans / _restore_spans ----

// protected holds the spans replaced by `___PROT<n>___` placeholders.
type protected struct {
	spans []string
	// exact is set when the one-pass restore might differ from the
	// reference's chain of str.replace calls (see restore).
	exact bool
}

// add appends the next placeholder to out and records span as its original.
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
					i = ed.protect(p, i, e)
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
					i = ed.protect(p, i, r)
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
				i = ed.protect(p, i, e)
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
				i = ed.protect(p, i, e)
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
				i = ed.protect(p, i, e)
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
				i = ed.protect(p, i, e)
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
				i = ed.protect(p, i, r)
				continue
			}
		}
		i++
	}
	return ed.result()
}

// protect replaces s[i:e] with a placeholder of p that keeps it from the
// normalization, and returns e, where the scan goes on.
func (e *editor) protect(p *protected, i, end int) int {
	e.out = p.add(e.at(i), e.s[i:end])
	e.last = end
	return end
}
