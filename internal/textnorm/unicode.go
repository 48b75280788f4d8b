package textnorm

//go:generate sh -c "python3 testdata/gen/gen_tables.py > tables.go"

// runeRanges is a sorted list of inclusive code-point ranges.
type runeRanges [][2]rune

// has reports whether r lies in one of the ranges.
func (t runeRanges) has(r rune) bool {
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < t[m][0]:
			hi = m
		case r > t[m][1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// The predicates below answer as CPython 3.11 does (Unicode 14.0.0), not as
// Go's unicode package does: the reference ran on 3.11 and newer Unicode
// versions assign characters that 14.0 left unassigned.

// isSpace is Python's str.isspace, which is also re's \s on str. It is
// small enough to inline; the rare non-ASCII spaces go to the table.
func isSpace(r rune) bool {
	if r < 0x80 {
		return asciiSpace[r]
	}
	return r >= 0x85 && r <= 0x3000 && isSpaceTable(r)
}

// asciiSpace marks \t \n \v \f \r, U+001C–U+001F and the space.
var asciiSpace = [0x80]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	0x1C: true, 0x1D: true, 0x1E: true, 0x1F: true, ' ': true}

// isSpaceTable is the non-ASCII part of isSpace, kept out of line so that
// isSpace inlines.
//
//go:noinline
func isSpaceTable(r rune) bool {
	if r > 0xA0 && r < 0x1680 {
		return false // the common case without a search
	}
	return tableSpace.has(r)
}

// isDigit is re's \d on str: a decimal digit of any script (category Nd).
func isDigit(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return tableDigit.has(r)
}

// isWord is re's \w on str: str.isalnum() or '_'.
func isWord(r rune) bool {
	if r < 0x80 {
		return isASCIIWord(r)
	}
	return tableWord.has(r)
}

// isOther reports whether unicodedata.category(r) starts with "C".
func isOther(r rune) bool {
	if r < 0x80 {
		return r < 0x20 || r == 0x7F
	}
	if (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x4E00 && r <= 0x9FFF) {
		return false // all assigned ideographs in 14.0; skip the search
	}
	return tableOther.has(r)
}

// isPunct reports whether unicodedata.category(r) starts with "P".
func isPunct(r rune) bool {
	return tablePunct.has(r)
}

// isASCIILetter is the class [A-Za-z].
func isASCIILetter(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// isASCIIAlnum is the class [A-Za-z0-9].
func isASCIIAlnum(r rune) bool {
	return isASCIILetter(r) || (r >= '0' && r <= '9')
}

// isASCIIWord is the class [A-Za-z0-9_].
func isASCIIWord(r rune) bool {
	return isASCIIAlnum(r) || r == '_'
}

// isCJK is the reference's _CJK class: CJK ideographs (extension A and the
// unified block) and the kana blocks.
func isCJK(r rune) bool {
	return (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3040 && r <= 0x30FF)
}

// isHan is the pipeline's [\u3400-\u9fff] class (language choice and the
// hyphen guard); unlike isCJK it takes in the blocks between the two
// ideograph ranges (Yijing symbols) and leaves out kana.
func isHan(r rune) bool {
	return r >= 0x3400 && r <= 0x9FFF
}

// trimSpace is Python's str.strip() with no argument.
func trimSpace(s []rune) []rune {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}
