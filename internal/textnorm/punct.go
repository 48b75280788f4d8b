package textnorm

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
