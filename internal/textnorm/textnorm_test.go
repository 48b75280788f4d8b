package textnorm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseLanguage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Language
	}{
		{"", Auto}, {"auto", Auto}, {"AUTO", Auto}, {"zh", ZH}, {" Zh ", ZH}, {"en", EN}, {"EN", EN},
	} {
		got, err := ParseLanguage(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseLanguage(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"ja", "chinese", "z h"} {
		if _, err := ParseLanguage(bad); err == nil {
			t.Errorf("ParseLanguage(%q): no error", bad)
		}
	}
	for _, l := range []Language{Auto, ZH, EN} {
		if got, err := ParseLanguage(l.String()); err != nil || got != l {
			t.Errorf("ParseLanguage(%v.String()) = %v, %v", l, got, err)
		}
	}
	if got := Language(9).String(); got != "Language(9)" {
		t.Errorf("Language(9).String() = %q", got)
	}
}

func TestParseStage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Stage
	}{
		{"", All}, {"all", All}, {"robust", Robust}, {"ROBUST", Robust}, {"wetext", WeText}, {"WeText", WeText},
	} {
		got, err := ParseStage(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseStage(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseStage("none"); err == nil {
		t.Error(`ParseStage("none"): no error`)
	}
	for _, s := range []Stage{All, Robust, WeText} {
		if got, err := ParseStage(s.String()); err != nil || got != s {
			t.Errorf("ParseStage(%v.String()) = %v, %v", s, got, err)
		}
	}
	if got := Stage(7).String(); got != "Stage(7)" {
		t.Errorf("Stage(7).String() = %q", got)
	}
}

// recorder is a grammar that records what it was given.
type recorder struct {
	name  string
	calls []string
}

func (r *recorder) Normalize(s string) string {
	r.calls = append(r.calls, s)
	return "<" + r.name + ":" + s + ">"
}

func TestPipelineOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		lang  Language
		stage Stage
		want  string
		zh    []string // what the zh grammar saw
		en    []string
	}{
		// Auto resolves on the robust output; the zh guard runs first; the
		// second robust pass sees the grammar output (the space after
		// "zh:" is its CJK/Latin rule, as the reference gives it).
		{"all zh", "请求接入-身份判定 A-B", Auto, All, "<zh: 请求接入，身份判定 A B。>。", []string{"请求接入，身份判定 A B。"}, nil},
		{"all en", "is -2", Auto, All, "<en:is -2。>。", nil, []string{"is -2。"}},
		// An explicit language wins over the text, and zh still guards.
		{"explicit zh", "A-B", ZH, All, "<zh:A B。>。", []string{"A B。"}, nil},
		{"explicit en", "中文-中文", EN, All, "<en: 中文-中文。>。", nil, []string{"中文-中文。"}},
		{"robust only", "A-B", Auto, Robust, "A-B。", nil, nil},
		{"wetext only", " A-B ", Auto, WeText, "<en: A-B >", nil, []string{" A-B "}},
		{"wetext only zh", "中-中", Auto, WeText, "<zh:中，中>", []string{"中，中"}, nil},
		// No letters and no Han: zh, like the reference with no voice.
		{"digits", "1-2", Auto, WeText, "<zh:1-2>", []string{"1-2"}, nil},
		// Empty text never reaches a grammar.
		{"empty all", "", Auto, All, "", nil, nil},
		{"empty wetext", "", Auto, WeText, "", nil, nil},
		{"blank all", " \n ", Auto, All, "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zh, en := &recorder{name: "zh"}, &recorder{name: "en"}
			p := &Pipeline{ZH: zh, EN: en}
			if got := p.Normalize(tc.text, tc.lang, tc.stage); got != tc.want {
				t.Errorf("Normalize(%q, %v, %v) = %q; want %q", tc.text, tc.lang, tc.stage, got, tc.want)
			}
			if strings.Join(zh.calls, "|") != strings.Join(tc.zh, "|") || strings.Join(en.calls, "|") != strings.Join(tc.en, "|") {
				t.Errorf("grammars saw zh %q en %q; want zh %q en %q", zh.calls, en.calls, tc.zh, tc.en)
			}
		})
	}
}

func TestPipelineNilGrammar(t *testing.T) {
	en := &recorder{name: "en"}
	p := &Pipeline{EN: en}
	// zh has no grammar: no hyphen guard, one robust pass, as the
	// reference with WeText off.
	if got, want := p.Normalize("中文-中文 A-B", Auto, All), NormalizeTTSText("中文-中文 A-B"); got != want {
		t.Errorf("All with nil zh grammar = %q; want %q", got, want)
	}
	if got := p.Normalize("中文-中文", Auto, WeText); got != "中文-中文" {
		t.Errorf("WeText with nil zh grammar = %q; want the input", got)
	}
	if got := p.Normalize("A-B", Auto, All); got != "<en:A-B。>。" {
		t.Errorf("All with en grammar = %q", got)
	}
	var zero Pipeline
	if got, want := zero.Normalize("x -- y", Auto, All), "x。y。"; got != want {
		t.Errorf("zero Pipeline = %q; want %q", got, want)
	}
}

func TestResolveLanguage(t *testing.T) {
	for _, tc := range []struct {
		text, voice string
		want        Language
	}{
		{"中文", "", ZH}, {"abc", "", EN}, {"abc中", "", ZH}, {"123", "", ZH}, {"123", "Ava", EN},
		{"123", "ava", ZH}, {"かな", "", ZH}, {"かな", "Nathan", EN}, {"㐀", "", ZH}, {"\u4dc0", "", ZH},
		{"é", "", ZH}, {"Ｆ", "", ZH}, {"", "Trump", EN}, {"", "", ZH},
	} {
		if got := ResolveLanguage(tc.text, tc.voice); got != tc.want {
			t.Errorf("ResolveLanguage(%q, %q) = %v; want %v", tc.text, tc.voice, got, tc.want)
		}
	}
}

// TestUnicode14 pins the places where Python 3.11's Unicode 14.0 and Go's
// newer tables disagree, so that an accidental switch to package unicode
// shows up.
func TestUnicode14(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		// U+1FAE8 (Unicode 15) and U+11F50 (Kawi digit, 15) are
		// unassigned (Cn) in 14.0 and dropped.
		{"a\U0001FAE8b", "a\U0001FAE8b"[:1] + "b。"},
		{"x\U00011F50", "x。"},
		// U+0378 is unassigned everywhere.
		{"a\u0378b", "ab。"},
		{"", ""},
	} {
		if got := NormalizeTTSText(tc.text); got != tc.want {
			t.Errorf("NormalizeTTSText(%+q) = %+q; want %+q", tc.text, got, tc.want)
		}
	}
	if isDigit('\U00011F50') || isWord('\U0001E4F0') {
		t.Error("Unicode 15 digits count as \\d or \\w")
	}
}

func TestInvalidUTF8(t *testing.T) {
	got := NormalizeTTSText("a\xffb")
	if !utf8.ValidString(got) || got != "a\uFFFDb。" {
		t.Errorf("NormalizeTTSText(invalid) = %+q", got)
	}
}

// TestLeakedPlaceholders pins a quirk of the reference: a token that
// swallows an earlier placeholder is restored before it, so the inner
// placeholder stays in the output.
func TestLeakedPlaceholders(t *testing.T) {
	for in, want := range map[string]string{
		"url:https://x.com/a": "url:___PROT0___",
		"wait...what":         "wait.___PROT0___",
		"x.@y":                "x.___PROT0___",
	} {
		if got := NormalizeTTSText(in); got != want {
			t.Errorf("NormalizeTTSText(%q) = %q; want %q", in, got, want)
		}
	}
}
