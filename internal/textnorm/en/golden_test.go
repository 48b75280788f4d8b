package en

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// goldenCase is one "written => spoken" line of an upstream test file.
type goldenCase struct {
	file, written, spoken string
	line                  int
}

// readGolden parses upstream's test format: "written => spoken", both
// sides trimmed (tn/english/test/utils.py).
func readGolden(t testing.TB) []goldenCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	var cases []goldenCase
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			written, spoken, ok := strings.Cut(sc.Text(), "=>")
			if !ok {
				t.Fatalf("%s:%d: no '=>'", p, line)
			}
			cases = append(cases, goldenCase{filepath.Base(p), strings.TrimSpace(written), strings.TrimSpace(spoken), line})
		}
		f.Close()
	}
	return cases
}

// TestGoldenFull runs every golden line through the full normalizer.
func TestGoldenFull(t *testing.T) {
	n := New()
	pass := map[string]int{}
	total := map[string]int{}
	for _, c := range readGolden(t) {
		total[c.file]++
		got := n.Normalize(c.written)
		if d, ok := fullDiffs[c.written]; ok {
			if got != d.got {
				t.Errorf("%s:%d: Normalize(%q) = %q, want %q (%s)", c.file, c.line, c.written, got, d.got, d.why)
			}
			continue
		}
		if got != c.spoken {
			t.Errorf("%s:%d: Normalize(%q)\n got: %q\nwant: %q", c.file, c.line, c.written, got, c.spoken)
			continue
		}
		pass[c.file]++
	}
	for _, f := range sortedKeys(total) {
		t.Logf("full pipeline %-16s %d/%d as written", f, pass[f], total[f])
	}
}

// fullDiffs are golden lines written for one rule in isolation whose
// reading through the full normalizer differs upstream too.
var fullDiffs = map[string]struct{ got, why string }{
	"1000": {"one thousand", "date (weight 0.99) beats cardinal (1.0) for 1000-2999; cardinal.txt tests Cardinal alone"},
	"1001": {"one thousand one", "read as a year, as above"},
	"1011": {"ten eleven", "read as a year, as above"},
	"1111": {"eleven eleven", "read as a year, as above"},
	"IV":   {"IV", "Roman is not in the Normalizer's rule inventory; roman.txt tests Roman alone"},
}

// ruleFor maps a golden file to the rule upstream tests it with.
var ruleFor = map[string]func(*matcher, *cands, int){
	"cardinal.txt":   (*matcher).cardinalRule,
	"date.txt":       (*matcher).dateRule,
	"decimal.txt":    (*matcher).decimalRule,
	"electronic.txt": (*matcher).electronicRule,
	"fraction.txt":   (*matcher).fractionRule,
	"measure.txt":    (*matcher).measureRule,
	"money.txt":      (*matcher).moneyRule,
	"ordinal.txt":    (*matcher).ordinalRule,
	"range.txt":      (*matcher).rangeRule,
	"telephone.txt":  (*matcher).telephoneRule,
	"time.txt":       (*matcher).timeRule,
	"whitelist.txt":  (*matcher).whitelistRule,
	"word.txt":       (*matcher).wordRule,
}

// TestGoldenRule runs each rule-level golden line through that rule's
// matcher alone, as upstream's per-rule tests do.
func TestGoldenRule(t *testing.T) {
	n := New()
	pass := map[string]int{}
	total := map[string]int{}
	for _, c := range readGolden(t) {
		rule, ok := ruleFor[c.file]
		if !ok {
			continue
		}
		total[c.file]++
		rs := []rune(c.written)
		m := newMatcher(n, rs)
		cs := &cands{m: m}
		rule(m, cs, 0)
		got, found := "", false
		for _, tok := range cs.list {
			if tok.end == len(rs) {
				got, found = tok.text(rs), true
			}
		}
		if !found || got != c.spoken {
			t.Errorf("%s:%d: rule(%q) = %q (matched %v), want %q", c.file, c.line, c.written, got, found, c.spoken)
			continue
		}
		pass[c.file]++
	}
	for _, f := range sortedKeys(total) {
		t.Logf("single rule   %-16s %d/%d", f, pass[f], total[f])
	}
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
