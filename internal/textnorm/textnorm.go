// Package textnorm prepares request text for MOSS-TTS-Nano the way
// OpenMOSS's text_normalization_pipeline.py does.
//
// The reference runs up to four stages:
//
//  1. NormalizeTTSText, a non-semantic "robust" cleanup
//     (tts_robust_normalizer_single_script.py);
//  2. ResolveLanguage, which picks the WeText grammar from the text;
//  3. GuardZHHyphens, which rewrites ASCII hyphens before the Chinese grammar;
//  4. a WeTextProcessing grammar (numbers, dates, units… spelled out), which
//     lives in the sub-packages zh and en and plugs in as a Grammar.
//
// With every stage on, the robust cleanup runs both before and after the
// grammar (the reference's "robust_pre+wetext:<lang>+robust_post").
// Pipeline.Normalize reproduces that order.
//
// The grammars plug in through the Grammar interface (they do not import
// this package); OpenMOSS returns the pipeline with the reference's grammars.
//
// Stages 1–3 match the reference byte for byte under Python 3.11 (Unicode
// 14.0.0); the Unicode predicates they need come from tables generated with
// that Python, not from Go's newer unicode package. The golden files in
// testdata were written by the reference's own code (testdata/gen). Known
// differences:
//
//   - Invalid UTF-8 bytes are read as U+FFFD, one per byte; a Python str
//     cannot hold them.
//   - The reference restores protected spans with one str.replace per
//     placeholder, a scan of the text each. The port does the same in one
//     pass where that provably gives the same string; where it might not
//     (the text contains "PROT", or a mention capped at 32 characters runs
//     into a placeholder) it runs the chain, but gives up past 64 MiB
//     scanned or an output 16 times the input and restores each placeholder
//     once instead. The chain grows exponentially on user-typed
//     placeholders nested in protected tokens, where the reference runs out
//     of memory (see protected.restore).
//
// Quirks of the reference are kept, for example a token that swallows an
// earlier placeholder leaks it: "url:https://x" becomes "url:___PROT0___".
package textnorm

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Language is the text normalization language: Auto (decided from the text),
// ZH or EN.
type Language int

// The languages. Auto is the zero value.
const (
	Auto Language = iota
	ZH
	EN
)

// ParseLanguage parses "auto" (or ""), "zh" or "en", ignoring case.
func ParseLanguage(s string) (Language, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "zh":
		return ZH, nil
	case "en":
		return EN, nil
	}
	return Auto, fmt.Errorf("text normalization language %q: want auto, zh or en", s)
}

// String returns "auto", "zh" or "en".
func (l Language) String() string {
	switch l {
	case Auto:
		return "auto"
	case ZH:
		return "zh"
	case EN:
		return "en"
	}
	return fmt.Sprintf("Language(%d)", int(l))
}

// Stage selects which stages Pipeline.Normalize runs.
type Stage int

// The stage selections. All is the zero value.
const (
	// All runs the robust cleanup, then the WeText grammar (with the
	// language choice and the Chinese hyphen guard), then the robust
	// cleanup again: the reference with both switches on.
	All Stage = iota
	// Robust runs only the robust cleanup (stage 1): the reference with
	// WeText off, its web demo's default.
	Robust
	// WeText runs only the language choice, the hyphen guard and the
	// grammar (stages 2–4): the reference with the robust cleanup off.
	WeText
)

// ParseStage parses "all" (or ""), "robust" or "wetext", ignoring case.
func ParseStage(s string) (Stage, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "all":
		return All, nil
	case "robust":
		return Robust, nil
	case "wetext":
		return WeText, nil
	}
	return All, fmt.Errorf("text normalization stage %q: want all, robust or wetext", s)
}

// String returns "all", "robust" or "wetext".
func (s Stage) String() string {
	switch s {
	case All:
		return "all"
	case Robust:
		return "robust"
	case WeText:
		return "wetext"
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// A Grammar is a WeTextProcessing-equivalent text normalizer for one
// language (implemented in textnorm/zh and textnorm/en). Normalize is never
// called with an empty string.
type Grammar interface {
	Normalize(s string) string
}

// Pipeline runs the stages in OpenMOSS's order. A nil grammar turns WeText
// off for that language: the hyphen guard and stage 4 are skipped and, under
// All, the robust cleanup runs once, so the text comes out as the reference
// would give it with WeText disabled.
//
// A Pipeline holds no state of its own; it is safe for concurrent use if its
// grammars are.
type Pipeline struct {
	ZH, EN Grammar
}

// Normalize normalizes text for synthesis. With lang Auto the language is
// resolved from the text as it enters the WeText stage, as ResolveLanguage
// does with no voice (the reference's server and infer.py pass none).
//
// Invalid UTF-8 bytes are read as U+FFFD, one per byte, before any stage:
// the reference works on Python str, which cannot hold them, and a grammar
// must not see them.
func (p *Pipeline) Normalize(text string, lang Language, stage Stage) string {
	out, _ := p.NormalizePair(text, "", lang, stage)
	return out
}

// NormalizePair normalizes a request's text and its prompt text (the
// transcript of the reference audio) together, as the reference's
// prepare_tts_request_texts does: with lang Auto the language is resolved
// from the text alone and applies to both, so the prompt cannot switch the
// grammar. An empty prompt stays empty.
func (p *Pipeline) NormalizePair(text, prompt string, lang Language, stage Stage) (string, string) {
	text, prompt = validUTF8(text), validUTF8(prompt)
	if stage == Robust {
		return NormalizeTTSText(text), NormalizeTTSText(prompt)
	}
	if stage == All {
		text, prompt = NormalizeTTSText(text), NormalizeTTSText(prompt)
	}
	if lang == Auto {
		lang = ResolveLanguage(text, "")
	}
	var g Grammar
	switch lang {
	case ZH:
		g = p.ZH
	case EN:
		g = p.EN
	}
	if g == nil {
		// WeText off for this language: under All the robust pass above
		// was the only one, as in the reference without WeText.
		return text, prompt
	}
	if lang == ZH {
		text, prompt = GuardZHHyphens(text), GuardZHHyphens(prompt)
	}
	text, prompt = grammar(g, text), grammar(g, prompt)
	if stage == All {
		text, prompt = NormalizeTTSText(text), NormalizeTTSText(prompt)
	}
	return text, prompt
}

// grammar runs g on non-empty text, as the reference's manager does.
func grammar(g Grammar, s string) string {
	if s == "" {
		return ""
	}
	return g.Normalize(s)
}

// validUTF8 reads each invalid byte of s as U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// englishVoices is the reference's ENGLISH_VOICES: built-in voices that
// choose the English grammar for text with neither Han nor Latin letters.
var englishVoices = map[string]bool{"Trump": true, "Ava": true, "Bella": true, "Adam": true, "Nathan": true}

// ResolveLanguage is stage 2, the reference's
// resolve_text_normalization_language: ZH if the text holds a Han character
// (U+3400–U+9FFF, kana excluded), else EN if it holds an ASCII letter or the
// voice is one of the reference's English built-in voices, else ZH.
func ResolveLanguage(text, voice string) Language {
	latin := false
	for _, r := range text {
		if isHan(r) {
			return ZH
		}
		latin = latin || isASCIILetter(r)
	}
	if latin || englishVoices[voice] {
		return EN
	}
	return ZH
}
