package textnorm

import "strings"

// keepHyphen is the reference's _ZH_WETEXT_KEEP_HYPHEN: hyphens that must
// survive the guard hide behind it until the last step. Like the reference,
// the guard also turns the marker into "-" where the user typed it.
const keepHyphen = "___KEEP_HYPHEN_BEFORE_ZH_WETEXT___"

// GuardZHHyphens is stage 3, the reference's _rewrite_hyphens_before_zh_wetext:
// it keeps the ASCII hyphens that Chinese WeText should read as minus signs,
// ranges or dates (-2, x=-2, 为-2, 10-3, 2024-05-01), turns a hyphen between
// two Han characters into "，" and one between other tokens into a space, so
// that WeText does not read "A-B" as "A减B". Text without '-' comes back
// unchanged (not even trimmed, nor made valid UTF-8); otherwise invalid bytes
// are read as U+FFFD.
func GuardZHHyphens(text string) string {
	if !strings.Contains(text, "-") {
		return text
	}
	s := []rune(text)
	keep := []rune(keepHyphen)
	comma := []rune("，")
	space := []rune(" ")

	// (^\s*)-\s*(?=\d): a negative number at the start.
	if i := skipSpace(s, 0); i < len(s) && s[i] == '-' {
		if j := skipSpace(s, i+1); j < len(s) && isDigit(s[j]) {
			t := append(append(append([]rune{}, s[:i]...), keep...), s[j:]...)
			s = t
		}
	}
	s = rewriteHyphens(s, isNegativeLead, isDigit, keep)
	s = rewriteHyphens(s, isHan, isDigit, keep)
	s = rewriteHyphens(s, isDigit, isDigit, keep)
	s = rewriteHyphens(s, isHan, isHan, comma)
	notSpaceOrHyphen := func(r rune) bool { return r != '-' && !isSpace(r) }
	s = rewriteHyphens(s, notSpaceOrHyphen, notSpaceOrHyphen, space)
	s = trimSpace(collapseSpaces(s))
	return strings.ReplaceAll(string(s), keepHyphen, "-")
}

// rewriteHyphens is re.sub(r"(L)\s*-\s*(?=R)", r"\1" + repl): the left rune
// stays, the spaced hyphen becomes repl, and the right rune, only looked at,
// may start the next match.
func rewriteHyphens(s []rune, left, right func(rune) bool, repl []rune) []rune {
	var out []rune
	i := 0
	for i < len(s) {
		r := s[i]
		if left(r) {
			if j := skipSpace(s, i+1); j < len(s) && s[j] == '-' {
				if k := skipSpace(s, j+1); k < len(s) && right(s[k]) {
					if out == nil {
						out = make([]rune, 0, len(s)+len(repl)*4)
						out = append(out, s[:i]...)
					}
					out = append(out, r)
					out = append(out, repl...)
					i = k
					continue
				}
			}
		}
		if out != nil {
			out = append(out, r)
		}
		i++
	}
	if out == nil {
		return s
	}
	return out
}

// isNegativeLead is the class [=:+*/,(，:：；;（【\[{]: a hyphen right after
// one of these, before a digit, is a minus sign.
func isNegativeLead(r rune) bool {
	switch r {
	case '=', ':', '+', '*', '/', ',', '(', '，', '：', '；', ';', '（', '【', '[', '{':
		return true
	}
	return false
}
