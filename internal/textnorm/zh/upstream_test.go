package zh

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testCase is one line of an upstream test file: written => spoken.
type testCase struct {
	line            int
	written, spoken string
}

// readCases parses a WeTextProcessing test file the way its
// tn/chinese/test/utils.py parse_test_case does.
func readCases(t *testing.T, name string) []testCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "upstream", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []testCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		arr := strings.Split(line, "=>")
		if len(arr) < 1 || len(arr) > 2 || !strings.Contains(line, "=>") {
			t.Fatalf("%s:%d: malformed line %q", name, n, line)
		}
		c := testCase{line: n, written: strings.TrimSpace(arr[0])}
		if len(arr) > 1 {
			c.spoken = strings.TrimSpace(arr[1])
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// wholeSink keeps the cheapest token that spans the whole input, as
// Processor.normalize does for one rule's tagger alone.
type wholeSink struct {
	n    int
	w    int
	out  string
	seen bool
}

func (s *wholeSink) want(end, w int) bool { return end == s.n && (!s.seen || w < s.w) }

func (s *wholeSink) put(end, w int, out string) {
	if s.want(end, w) {
		s.w, s.out, s.seen = w, out, true
	}
}

// applyRule normalizes s with one rule's tagger and verbalizer only.
func applyRule(opt Options, r rule, s string) (string, bool) {
	n := NewWithOptions(opt)
	p := n.newParser(s)
	if len(p.r) == 0 {
		return "", false
	}
	ws := &wholeSink{n: len(p.r)}
	r(p, 0, ws)
	return ws.out, ws.seen
}

// upstreamRuns lists how the upstream test suite (tn/chinese/test/*_test.py,
// release 1.2.0) runs each data file.
var upstreamRuns = []struct {
	name string // test and file
	file string
	run  func(s string) (string, bool)
}{
	{"cardinal_rule", "cardinal.txt", ruleRun((*parser).cardinal)},
	{"number", "number.txt", numberRun},
	{"char_rule", "char.txt", ruleRun((*parser).char)},
	{"date_rule", "date.txt", ruleRun((*parser).date)},
	{"fraction_rule", "fraction.txt", ruleRun((*parser).fraction)},
	{"math_rule", "math.txt", mathRun},
	{"measure_rule", "measure.txt", ruleRun((*parser).measure)},
	{"money_rule", "money.txt", ruleRun((*parser).money)},
	{"sport_rule", "sport.txt", ruleRun((*parser).sport)},
	{"time_rule", "time.txt", ruleRun((*parser).time)},
	// Whitelist() defaults to remove_erhua=True.
	{"whitelist_rule", "whitelist.txt", func(s string) (string, bool) {
		return applyRule(Options{RemoveErhua: true}, (*parser).whitelist, s)
	}},
	// Normalizer(tag_oov=True), other options at their defaults.
	{"normalizer/cardinal", "cardinal.txt", normalizerRun},
	{"normalizer/char", "char.txt", normalizerRun},
	{"normalizer/date", "date.txt", normalizerRun},
	{"normalizer/fraction", "fraction.txt", normalizerRun},
	{"normalizer/math", "math.txt", normalizerRun},
	{"normalizer/money", "money.txt", normalizerRun},
	{"normalizer/time", "time.txt", normalizerRun},
	{"normalizer/whitelist", "whitelist.txt", normalizerRun},
	{"normalizer/normalizer", "normalizer.txt", normalizerRun},
	// PostProcessor(tag_oov=True) and PreProcessor() alone.
	{"postprocessor", "postprocessor.txt", func(s string) (string, bool) {
		n := NewWithOptions(Options{RemoveInterjections: true, FullToHalf: true, TagOOV: true})
		var b strings.Builder
		n.writePost(&b, []rune(s))
		return b.String(), true
	}},
	{"preprocessor", "preprocessor.txt", func(s string) (string, bool) {
		n := NewWithOptions(Options{TraditionalToSimple: true})
		return string(n.newParser(s).r), true
	}},
}

func ruleRun(r rule) func(string) (string, bool) {
	return func(s string) (string, bool) { return applyRule(Options{}, r, s) }
}

// mathRun applies the math rule alone: its chain states plus its lone
// operators, as one token over the whole input.
func mathRun(s string) (string, bool) {
	n := NewWithOptions(Options{})
	p := n.newParser(s)
	l := n.run(p, []rule{(*parser).math}, true, false)
	e := int32(len(p.r))
	if l.cost[e] == inf || l.back[e].start != 0 {
		return "", false
	}
	return l.spoken(p, e), true
}

func normalizerRun(s string) (string, bool) {
	o := UpstreamDefaults()
	o.TagOOV = true
	return NewWithOptions(o).Normalize(s), true
}

// numberRun applies cardinal.number alone: the whole input must be one number.
func numberRun(s string) (string, bool) {
	p := NewWithOptions(Options{}).newParser(s)
	out, ok := "", false
	p.numbers(0, false, func(n num) {
		if n.end == len(p.r) && !ok {
			out, ok = p.numString(n, false), true
		}
	})
	return out, ok
}

func TestUpstream(t *testing.T) {
	for _, run := range upstreamRuns {
		t.Run(run.name, func(t *testing.T) {
			cases := readCases(t, run.file)
			pass := 0
			for _, c := range cases {
				got, ok := run.run(c.written)
				switch {
				case !ok:
					t.Errorf("%s:%d: %q: no parse; want %q", run.file, c.line, c.written, c.spoken)
				case got != c.spoken:
					t.Errorf("%s:%d: %q = %q; want %q", run.file, c.line, c.written, got, c.spoken)
				default:
					pass++
				}
			}
			t.Logf("%s: %d/%d pass", run.file, pass, len(cases))
		})
	}
}

// TestDigitTables checks that the digit names the number code uses are
// those of number/digit.tsv and zero.tsv.
func TestDigitTables(t *testing.T) {
	tab := loadTables()
	if len(tab.digit)+len(tab.zero) != 20 {
		t.Fatalf("digit tables have %d+%d rows; want 18+2", len(tab.digit), len(tab.zero))
	}
	for c, name := range tab.digit {
		if !isDigit(c) || digitNames[digitValue(c)] != name {
			t.Errorf("digit.tsv %q → %q; code reads %q", c, name, digitNames[digitValue(c)])
		}
	}
	for c, name := range tab.zero {
		if !isDigit(c) || digitNames[digitValue(c)] != name {
			t.Errorf("zero.tsv %q → %q; code reads %q", c, name, digitNames[digitValue(c)])
		}
	}
}
