package en

import (
	"bufio"
	"os"
	"path/filepath"
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

func TestGolden(t *testing.T) {
	n := New()
	pass := map[string]int{}
	total := map[string]int{}
	for _, c := range readGolden(t) {
		total[c.file]++
		got := n.Normalize(c.written)
		if got == c.spoken {
			pass[c.file]++
			continue
		}
		if why, ok := knownDiffs[c.written]; ok {
			t.Logf("%s:%d known difference (%s): %q -> %q, upstream rule test wants %q", c.file, c.line, why, c.written, got, c.spoken)
			continue
		}
		t.Errorf("%s:%d: Normalize(%q)\n got: %q\nwant: %q", c.file, c.line, c.written, got, c.spoken)
	}
	for f, n := range total {
		t.Logf("%-16s %d/%d", f, pass[f], n)
	}
}

// knownDiffs are upstream rule-level test lines whose expectation does not
// hold for the full normalizer upstream either, with the reason.
var knownDiffs = map[string]string{}
