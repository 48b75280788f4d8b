package text

import "unicode"

// Python's str predicates for one character, as CPython 3.12 defines them
// (Unicode 15.0, the version of Go's unicode tables). They were checked
// against CPython for every code point.

// isSpace is str.isspace: White_Space plus U+001C..U+001F, which CPython
// counts as whitespace because of their bidirectional class.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// isUpper is str.isupper for one character: the Uppercase property
// (Lu plus Other_Uppercase, e.g. Ⓐ).
func isUpper(r rune) bool {
	return unicode.IsUpper(r) || unicode.Is(unicode.Other_Uppercase, r)
}

// isAlnum is str.isalnum for one character: a letter (L*) or a character
// with a numeric value, which for CPython is exactly the N* categories
// (CJK numerals are letters anyway).
func isAlnum(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// upper is str.upper for one character: the full (SpecialCasing)
// mapping where there is one, e.g. ß -> SS, else the simple mapping.
func upper(r rune) []rune {
	if s, ok := specialUpper[r]; ok {
		return []rune(s)
	}
	return []rune{unicode.ToUpper(r)}
}

// strip is str.strip() with no arguments.
func strip(rs []rune) []rune {
	i, j := stripBounds(rs, 0, len(rs))
	return rs[i:j]
}

// stripBounds returns the bounds of strip(rs[i:j]) in rs.
func stripBounds(rs []rune, i, j int) (int, int) {
	for i < j && isSpace(rs[i]) {
		i++
	}
	for j > i && isSpace(rs[j-1]) {
		j--
	}
	return i, j
}

// countWords is len(str.split()).
func countWords(rs []rune) int {
	n, inWord := 0, false
	for _, r := range rs {
		if isSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}

// containsCJK is upstream's _contains_cjk: CJK ideographs, extension A,
// kana and Hangul syllables (plus whatever else shares those ranges).
func containsCJK(rs []rune) bool {
	for _, r := range rs {
		if (r >= 0x4e00 && r <= 0x9fff) || (r >= 0x3400 && r <= 0x4dbf) ||
			(r >= 0x3040 && r <= 0x30ff) || (r >= 0xac00 && r <= 0xd7af) {
			return true
		}
	}
	return false
}
