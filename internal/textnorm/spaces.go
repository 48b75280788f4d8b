package textnorm

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
