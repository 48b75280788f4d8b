package textnorm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenCase is one row of the golden files that testdata/gen/gen_golden.py
// writes by running OpenMOSS's Python code.
type goldenCase struct {
	Group  string `json:"group"`
	In     string `json:"in"`
	Out    string `json:"out"`
	Voice  string `json:"voice"`
	Prompt string `json:"prompt"`
	// PromptOut is the normalized prompt text (pipeline.json).
	PromptOut string `json:"prompt_out"`
	Stage     string `json:"stage"`
	Method    string `json:"method"`
}

func readGolden(t *testing.T, name string) []goldenCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(cases) < 400 {
		t.Fatalf("%s: %d cases, want ≥ 400", name, len(cases))
	}
	return cases
}

// checkGolden runs f over every case and reports mismatches, a few per group.
func checkGolden(t *testing.T, name string, f func(c goldenCase) string) {
	cases := readGolden(t, name)
	failed := map[string]int{}
	for _, c := range cases {
		got := f(c)
		if got == c.Out {
			continue
		}
		failed[c.Group]++
		if failed[c.Group] <= 5 {
			t.Errorf("%s [%s] %+q (voice %q stage %q):\n got %+q\nwant %+q", name, c.Group, c.In, c.Voice, c.Stage, got, c.Out)
		}
	}
	if len(failed) > 0 {
		t.Errorf("%s: failures per group: %v", name, failed)
	}
}

func TestGoldenRobust(t *testing.T) {
	checkGolden(t, "robust.json", func(c goldenCase) string { return NormalizeTTSText(c.In) })
}

func TestGoldenHyphen(t *testing.T) {
	checkGolden(t, "hyphen.json", func(c goldenCase) string { return GuardZHHyphens(c.In) })
}

func TestGoldenLanguage(t *testing.T) {
	checkGolden(t, "language.json", func(c goldenCase) string { return ResolveLanguage(c.In, c.Voice).String() })
}

// stubGrammar copies gen_golden.py's StubManager: it makes the hyphen
// guard and the order of the stages visible in the output.
type stubGrammar struct {
	minus, suffix string
}

func (g stubGrammar) Normalize(s string) string {
	return strings.ReplaceAll(s, "-", g.minus) + g.suffix
}

func stubPipeline() *Pipeline {
	return &Pipeline{ZH: stubGrammar{"减", "[zh]"}, EN: stubGrammar{" minus ", " [en]"}}
}

func TestGoldenPipeline(t *testing.T) {
	p := stubPipeline()
	checkGolden(t, "pipeline.json", func(c goldenCase) string {
		stage, err := ParseStage(c.Stage)
		if err != nil {
			t.Fatal(err)
		}
		text, prompt := p.NormalizePair(c.In, c.Prompt, Auto, stage)
		if prompt != c.PromptOut {
			t.Errorf("NormalizePair(%+q, %+q, auto, %v) prompt = %+q; want %+q", c.In, c.Prompt, stage, prompt, c.PromptOut)
		}
		if c.Prompt == "" {
			if single := p.Normalize(c.In, Auto, stage); single != text {
				t.Errorf("Normalize(%+q) = %+q; NormalizePair gives %+q", c.In, single, text)
			}
		}
		return text
	})
}
