package textnorm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are the nasty cases every fuzz target starts from.
var fuzzSeeds = []string{
	"", " ", "\n\n", "\r\n", "\xff\xfe", "a\x00b", "\u200b\ufeff", "\u2028\u2029",
	"[a](https://x)", "# h\n> q\n- l\n1. o", "A->B<-C<=>D→E", "--->", "<<<---", "———", "- - -",
	"https://x.com/a_b", "a@b.com", "@user", "@abcdefghijklmnopqrstuvwxyz01234https://x.com", "r/go", "#t#u",
	".env", "app.js.map", "v2.3.1", "url:https://x", "wait...what", "___PROT0___", "____PROT1___PROT0___",
	"PROT1@abcdefghijklmnopqrstuvwxyz012345", "中 文 abc 123", "[ a ]", "【【a】", "《a》。《b》", "!!??！！",
	"……....", "-2", "x=-2", "中-中", "A - B", "___KEEP_HYPHEN_BEFORE_ZH_WETEXT___", "😀👨‍👩‍👧", "٣-٤",
}

// checkOutput holds for every stage: valid UTF-8 and bounded growth (the
// largest growth is an invalid byte read as U+FFFD, 1 byte to 3).
func checkOutput(t *testing.T, stage, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%+q) = %+q: invalid UTF-8", stage, in, out)
	}
	if len(out) > 4*len(in)+8 {
		t.Fatalf("%s(%+q): %d bytes out of %d", stage, in, len(out), len(in))
	}
}

func FuzzNormalizeTTSText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := NormalizeTTSText(in)
		checkOutput(t, "NormalizeTTSText", in, out)
		if again := NormalizeTTSText(in); again != out {
			t.Fatalf("not deterministic: %+q then %+q", out, again)
		}
		// The one-pass restore must agree with the reference's chain.
		if exact := normalizeTTSText(in, true); exact != out {
			t.Fatalf("NormalizeTTSText(%+q) = %+q; the reference's restore gives %+q", in, out, exact)
		}
	})
}

func FuzzGuardZHHyphens(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := GuardZHHyphens(in)
		if !strings.Contains(in, "-") {
			if out != in {
				t.Fatalf("GuardZHHyphens(%+q) = %+q; text without '-' must come back as is", in, out)
			}
			return
		}
		checkOutput(t, "GuardZHHyphens", in, out)
		if again := GuardZHHyphens(in); again != out {
			t.Fatalf("not deterministic: %+q then %+q", out, again)
		}
	})
}

func FuzzResolveLanguage(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "")
	}
	f.Add("123", "Ava")
	f.Fuzz(func(t *testing.T, in, voice string) {
		got := ResolveLanguage(in, voice)
		if got != ZH && got != EN {
			t.Fatalf("ResolveLanguage(%+q, %q) = %v", in, voice, got)
		}
		if strings.ContainsFunc(in, isHan) && got != ZH {
			t.Fatalf("ResolveLanguage(%+q) = %v with Han in the text", in, got)
		}
	})
}

func FuzzPipeline(f *testing.F) {
	for k, s := range fuzzSeeds {
		f.Add(s, fuzzSeeds[(k*7+3)%len(fuzzSeeds)], uint8(k), uint8(k/3))
	}
	p := stubPipeline()
	f.Fuzz(func(t *testing.T, in, prompt string, lang, stage uint8) {
		l, s := Language(lang%3), Stage(stage%3)
		out, pout := p.NormalizePair(in, prompt, l, s)
		for _, c := range []struct{ in, out string }{{in, out}, {prompt, pout}} {
			if !utf8.ValidString(c.out) {
				t.Fatalf("NormalizePair(%+q, %+q, %v, %v) = %+q: invalid UTF-8", in, prompt, l, s, c.out)
			}
			// The stub grammars add at most 6 bytes per '-' plus a suffix.
			if len(c.out) > 4*(len(c.in)+6*strings.Count(c.in, "-")+8)+8 {
				t.Fatalf("NormalizePair(%+q, %+q, %v, %v): %d bytes out of %d", in, prompt, l, s, len(c.out), len(c.in))
			}
		}
		if prompt == "" && pout != "" {
			t.Fatalf("empty prompt became %+q", pout)
		}
		if again, pagain := p.NormalizePair(in, prompt, l, s); again != out || pagain != pout {
			t.Fatalf("not deterministic: %+q, %+q then %+q, %+q", out, pout, again, pagain)
		}
		if single := p.Normalize(in, l, s); single != out {
			t.Fatalf("Normalize(%+q) = %+q; NormalizePair gives %+q", in, single, out)
		}
	})
}
