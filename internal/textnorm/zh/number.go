package zh

import "strings"

// maxIntDigits is the longest integer WeTextProcessing's cardinal number
// grammar reads as a whole: up to four digits before 亿 and eight after.
const maxIntDigits = 12

// fracCap bounds which prefixes of a long digit run a token may end in. A
// token may always end at the run's end; ending inside a run is considered
// only within its first fracCap digits. Upstream considers every position;
// the cap keeps pathological inputs (100k digits) linear and changes nothing
// for text where no run after a dot is longer than fracCap digits.
const fracCap = 32

// num is one parse of cardinal.number (约? 人均? (number | number%)).
// Positions index the input runes; a span may contain thousands commas
// when it was parsed in measure's comma-stripping mode.
type num struct {
	start   int // first rune (约, 人均, sign or digit)
	body    int // after the 约/人均 prefix
	intBeg  int // first integer digit (after the sign)
	intEnd  int // past the last integer digit
	fracEnd int // past the last fraction digit; == intEnd without a fraction
	end     int // past the whole number, including "%"
	pct     bool
}

func isASCIIDigit(c rune) bool { return c >= '0' && c <= '9' }

// isDigit reports whether c is in number/digit.tsv or number/zero.tsv.
func isDigit(c rune) bool { return isASCIIDigit(c) || (c >= '０' && c <= '９') }

// digitValue returns 0–9 for a digit accepted by isDigit.
func digitValue(c rune) int {
	if isASCIIDigit(c) {
		return int(c - '0')
	}
	return int(c - '０')
}

func isComma(c rune) bool { return c == ',' || c == '，' }

// nextDigit returns the position of the digit that continues a digit
// sequence whose previous digit is at p-1, or -1. With commas, a single
// comma between two ASCII digits is skipped, as measure's strip_comma rule
// deletes it.
func (p *parser) nextDigit(q int, commas bool) int {
	r := p.r
	if q >= len(r) {
		return -1
	}
	if isDigit(r[q]) {
		return q
	}
	if commas && isComma(r[q]) && q > 0 && isASCIIDigit(r[q-1]) && q+1 < len(r) && isASCIIDigit(r[q+1]) {
		return q + 1
	}
	return -1
}

// nums returns every parse of cardinal.number starting at i (see numbers).
// The result lives in a scratch buffer that the parse loop reuses at the
// next position.
func (p *parser) nums(i int, commas bool) []num {
	if i >= len(p.r) || !startsNumber(p.r[i]) {
		return nil
	}
	from := len(p.numBuf)
	p.numbers(i, commas, func(n num) { p.numBuf = append(p.numBuf, n) })
	return p.numBuf[from:len(p.numBuf):len(p.numBuf)]
}

// startsNumber reports whether a number can start with c.
func startsNumber(c rune) bool {
	return isDigit(c) || c == '约' || c == '人' || c == '+' || c == '-' || c == '±'
}

// numbers calls fn for every parse of cardinal.number starting at i. With
// commas, thousands separators between ASCII digits are skipped.
func (p *parser) numbers(i int, commas bool, fn func(num)) {
	r := p.r
	q := i
	if q < len(r) && r[q] == '约' {
		q++
	}
	if q+1 < len(r) && r[q] == '人' && r[q+1] == '均' {
		q += 2
	}
	body := q
	if q < len(r) && (r[q] == '+' || r[q] == '-' || r[q] == '±') { // number/sign.tsv
		q++
	}
	intBeg := q
	if q >= len(r) || !isDigit(r[q]) {
		return
	}
	var pos [maxIntDigits]int
	n := 0
	for d := q; d >= 0 && n < maxIntDigits; d = p.nextDigit(pos[n-1]+1, commas) {
		pos[n] = d
		n++
	}
	for l := 1; l <= n; l++ {
		if l > 1 && digitValue(r[pos[0]]) == 0 {
			break
		}
		intEnd := pos[l-1] + 1
		base := num{start: i, body: body, intBeg: intBeg, intEnd: intEnd, fracEnd: intEnd}
		p.emitNum(base, fn)
		if intEnd+1 < len(r) && r[intEnd] == '.' && isDigit(r[intEnd+1]) {
			// The fraction may end after any of its first fracCap digits
			// or at the end of its run.
			last := -1
			k := 0
			for d := intEnd + 1; d >= 0; d = p.nextDigit(d+1, commas) {
				k++
				if k > fracCap {
					break
				}
				base.fracEnd = d + 1
				p.emitNum(base, fn)
				last = d + 1
			}
			if k > fracCap {
				runEnd := p.runEnd(intEnd+1, commas)
				if runEnd != last {
					base.fracEnd = runEnd
					p.emitNum(base, fn)
				}
			}
		}
	}
}

func (p *parser) emitNum(n num, fn func(num)) {
	n.end = n.fracEnd
	n.pct = false
	fn(n)
	if n.end < len(p.r) && p.r[n.end] == '%' {
		n.end++
		n.pct = true
		fn(n)
	}
}

// runEnd returns the end of the digit run starting at i.
func (p *parser) runEnd(i int, commas bool) int {
	if commas {
		return int(p.commaRun[i])
	}
	return int(p.digitRun[i])
}

// digitName reads one digit: 0 → 零, 1 → 一, … (number/digit.tsv and
// zero.tsv; TestDigitTables checks that they agree).
func (p *parser) digitName(c rune) string { return digitNames[digitValue(c)] }

var digitNames = [...]string{"零", "一", "二", "三", "四", "五", "六", "七", "八", "九"}

// writeInt reads an integer of 1–12 digits the way cardinal.number does.
func writeInt(b *strings.Builder, d []int) {
	switch l := len(d); {
	case l == 1:
		b.WriteString(digitNames[d[0]])
	case l <= 4:
		writeLead(b, d)
	case l <= 8:
		writeLead(b, d[:l-4])
		b.WriteString("万")
		writeFourAny(b, d[l-4:])
	default:
		writeLead(b, d[:l-8])
		b.WriteString("亿")
		rest := d[l-8:]
		switch {
		case !allZero(rest[:4]):
			writeFourNonzero(b, rest[:4])
			b.WriteString("万")
			writeFourAny(b, rest[4:])
		case allZero(rest[4:]):
		case rest[4] != 0:
			b.WriteString("零")
			writeThousand(b, rest[4:])
		default:
			writeFourNonzero(b, rest[4:])
		}
	}
}

func allZero(d []int) bool {
	for _, v := range d {
		if v != 0 {
			return false
		}
	}
	return true
}

// writeLead reads 1–4 digits without a leading zero: digit | ten | hundred |
// thousand. Two digits use "ten", which drops the 一 of 一十.
func writeLead(b *strings.Builder, d []int) {
	switch len(d) {
	case 1:
		b.WriteString(digitNames[d[0]])
	case 2:
		if d[0] != 1 {
			b.WriteString(digitNames[d[0]])
		}
		b.WriteString("十")
		if d[1] != 0 {
			b.WriteString(digitNames[d[1]])
		}
	case 3:
		writeHundred(b, d)
	case 4:
		writeThousand(b, d)
	}
}

func writeTens(b *strings.Builder, d []int) {
	b.WriteString(digitNames[d[0]])
	b.WriteString("十")
	if d[1] != 0 {
		b.WriteString(digitNames[d[1]])
	}
}

func writeHundred(b *strings.Builder, d []int) {
	b.WriteString(digitNames[d[0]])
	b.WriteString("百")
	switch {
	case d[1] != 0:
		writeTens(b, d[1:])
	case d[2] != 0:
		b.WriteString("零")
		b.WriteString(digitNames[d[2]])
	}
}

func writeThousand(b *strings.Builder, d []int) {
	b.WriteString(digitNames[d[0]])
	b.WriteString("千")
	switch {
	case d[1] != 0:
		writeHundred(b, d[1:])
	case d[2] != 0:
		b.WriteString("零")
		writeTens(b, d[2:])
	case d[3] != 0:
		b.WriteString("零")
		b.WriteString(digitNames[d[3]])
	}
}

func writeFourNonzero(b *strings.Builder, d []int) {
	switch {
	case d[0] != 0:
		writeThousand(b, d)
	case d[1] != 0:
		b.WriteString("零")
		writeHundred(b, d[1:])
	case d[2] != 0:
		b.WriteString("零")
		writeTens(b, d[2:])
	default:
		b.WriteString("零")
		b.WriteString(digitNames[d[3]])
	}
}

func writeFourAny(b *strings.Builder, d []int) {
	if !allZero(d) {
		writeFourNonzero(b, d)
	}
}

// writeNum writes the spoken form of n. exactTwo applies measure's rule that
// a number read exactly 二 becomes 两 (两个, not 二个).
func (p *parser) writeNum(b *strings.Builder, n num, exactTwo bool) {
	r := p.r
	b.WriteString(string(r[n.start:n.body])) // 约, 人均: accepted as written
	if n.pct {
		b.WriteString("百分之")
	}
	hasSign := n.intBeg > n.body
	if hasSign {
		b.WriteString(p.t.sign[r[n.body]])
	}
	var buf [maxIntDigits]int
	d := buf[:0]
	for q := n.intBeg; q < n.intEnd; q++ {
		if isDigit(r[q]) {
			d = append(d, digitValue(r[q]))
		}
	}
	noFrac := n.fracEnd == n.intEnd
	switch {
	case exactTwo && !hasSign && !n.pct && n.start == n.body && noFrac && len(d) == 1 && d[0] == 2:
		b.WriteString("两")
	case !hasSign && d[0] == 2 && len(d) != 1 && len(d) != 2 && len(d) != 6 && len(d) != 10:
		// cardinal's [BOS] rewrite 二百/二千/二万/二亿 → 两…: the reading
		// starts with 二 and a unit unless the leading group is one digit
		// alone (二) or two digits (二十…).
		b.WriteString("两")
		var sub strings.Builder
		writeInt(&sub, d)
		b.WriteString(strings.TrimPrefix(sub.String(), "二"))
	default:
		writeInt(b, d)
	}
	if !noFrac {
		b.WriteString(p.t.dot[r[n.intEnd]])
		for q := n.intEnd + 1; q < n.fracEnd; q++ {
			if isDigit(r[q]) {
				b.WriteString(p.digitName(r[q]))
			}
		}
	}
}
