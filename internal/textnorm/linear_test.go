package textnorm

import (
	"fmt"
	"strings"
	"testing"
)

// TestPathological runs inputs that make backtracking regular expressions
// or naive rescans quadratic. Every rule here is a linear scan, so each
// finishes quickly; the test asserts completion and sane output, no timing.
// A quadratic rule would turn this test's seconds into hours. (Sizes: 100k
// digits, 10k nested brackets, 100k punctuation; smaller under -race and
// -short.)
func TestPathological(t *testing.T) {
	n := 100_000
	if raceEnabled || testing.Short() {
		n = 5_000
	}
	cases := map[string]string{
		"digits":             strings.Repeat("7", n),
		"nested brackets":    strings.Repeat("[", n/10) + "x" + strings.Repeat("]", n/10),
		"open brackets":      strings.Repeat("[", n),
		"nested corners":     strings.Repeat("【", n/10) + "x" + strings.Repeat("】", n/10),
		"open corners":       strings.Repeat("【", n/3),
		"nested braces":      strings.Repeat("{", n/10) + strings.Repeat("}", n/10),
		"nested titles":      strings.Repeat("。《", n/10) + "x" + strings.Repeat("》", n/10),
		"titles no close":    strings.Repeat("。《", n/2),
		"bangs":              strings.Repeat("!?", n/2),
		"dots":               strings.Repeat(".", n),
		"ellipses":           strings.Repeat("…", n/3),
		"hyphens":            strings.Repeat("-", n),
		"hyphens then x":     strings.Repeat("-", n) + "x",
		"shafts":             strings.Repeat("=", n),
		"less than":          strings.Repeat("<", n),
		"arrow heads":        strings.Repeat("<-", n/2),
		"spaces":             strings.Repeat(" ", n),
		"spaces then dash":   strings.Repeat(" ", n) + "-",
		"newlines":           strings.Repeat("\n", n),
		"lines":              strings.Repeat("a\n", n/2),
		"underscores":        strings.Repeat("_", n),
		"placeholder heads":  strings.Repeat("___PROT", n/7),
		"at signs":           strings.Repeat("@", n),
		"mentions":           strings.Repeat("@a ", n/3),
		"emails no domain":   strings.Repeat("a%", n/2) + "@" + strings.Repeat("b", n/2),
		"local run":          strings.Repeat("a.", n/2) + "@",
		"hashes":             strings.Repeat("#", n),
		"dot run":            strings.Repeat("._", n/2),
		"file run":           strings.Repeat("a/", n/2) + "_",
		"link heads":         strings.Repeat("[a](http://", n/11),
		"urls":               strings.Repeat("http://", n/7),
		"cjk spaces":         strings.Repeat("中 ", n/2),
		"cjk latin":          strings.Repeat("中a", n/2),
		"latin run then cjk": strings.Repeat("a", n) + "中",
		"hyphen words":       strings.Repeat("a-", n/2),
		"spaced hyphens":     strings.Repeat(" - ", n/3),
		"han hyphens":        strings.Repeat("中-", n/2),
		"minus signs":        strings.Repeat("=-1", n/3),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			out := NormalizeTTSText(in)
			checkOutput(t, "NormalizeTTSText", in, out)
			checkOutput(t, "GuardZHHyphens", in, GuardZHHyphens(in))
			p := stubPipeline()
			_ = p.Normalize(in, Auto, All)
		})
	}
}

// TestRestoreBlowup pins the bound on the reference's restore chain: spans
// that each hold two copies of the next placeholder double the text every
// round in the reference (2^40 copies here); the port stops and restores
// each placeholder once.
func TestRestoreBlowup(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "#___PROT%d______PROT%d___ ", i, i)
	}
	in := b.String()
	out := NormalizeTTSText(in)
	checkOutput(t, "NormalizeTTSText", in, out)
	if !strings.HasPrefix(out, "#___PROT1______PROT1___ #___PROT2") {
		t.Errorf("NormalizeTTSText(%.40q…) = %.80q…", in, out)
	}
	// Small enough, the chain runs as the reference's (value from Python).
	small := "#___PROT1______PROT1___ #___PROT2______PROT2___ #x"
	if got, want := NormalizeTTSText(small), "###x#x##x#x ##x#x #x。"; got != want {
		t.Errorf("NormalizeTTSText(%q) = %q; want %q", small, got, want)
	}
}
