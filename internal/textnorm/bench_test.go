package textnorm

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

const benchSentence = "2026 年 3 月 31 日，安全研究员 Chaofan Shou (@Fried_rice) 发现 Anthropic 的 npm 包中暴露了 .map 文件，"

// benchMixed returns a 4,096-character zh/en text with the tokens the rules
// look at: Markdown, URLs, versions, brackets, arrows, dashes, punctuation
// runs and line breaks.
func benchMixed() string {
	parts := []string{
		"# Release notes for v2.3.1\n",
		"- 修复了 app.js.map 泄露的问题，详见 https://github.com/example/repo/issues/12 。\n",
		"- Thanks @alice and @bob!!! 这个版本把 3.0.0-rc.1 的改动合并了……\n",
		"【公告】今天 20:00 维护——预计 30 分钟。请求接入 -> 身份判定 -> 域服务处理\n",
		"The meeting is at 10:30-11:45 on 2024-05-01 (UTC+8). Contact ops+tts@example.ai for details.\n",
		"我喜欢《哈姆雷特》这本书。[S1]你好。{whisper} snake_case_name and foo/bar-baz.py are fine?!\n",
	}
	var b strings.Builder
	for utf8.RuneCountInString(b.String()) < 4096 {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	r := []rune(b.String())
	return string(r[:4096])
}

// loop runs f b.N times and also reports the thread's CPU time per op.
func loop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if cpu := threadCPU() - start; cpu > 0 && n > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

func BenchmarkRobustSentence(b *testing.B) {
	b.SetBytes(int64(len(benchSentence)))
	loop(b, func() { NormalizeTTSText(benchSentence) })
}

func BenchmarkRobustMixed4096(b *testing.B) {
	text := benchMixed()
	b.SetBytes(int64(len(text)))
	loop(b, func() { NormalizeTTSText(text) })
}

// identity stands in for a grammar so the benchmarks time stages 1–3 and
// the pipeline's plumbing, not a grammar.
type identity struct{}

func (identity) Normalize(s string) string { return s }

func BenchmarkPipelineSentence(b *testing.B) {
	p := &Pipeline{ZH: identity{}, EN: identity{}}
	b.SetBytes(int64(len(benchSentence)))
	loop(b, func() { p.Normalize(benchSentence, Auto, All) })
}

func BenchmarkPipelineMixed4096(b *testing.B) {
	p := &Pipeline{ZH: identity{}, EN: identity{}}
	text := benchMixed()
	b.SetBytes(int64(len(text)))
	loop(b, func() { p.Normalize(text, Auto, All) })
}

func BenchmarkGuardZHHyphensMixed4096(b *testing.B) {
	text := NormalizeTTSText(benchMixed())
	b.SetBytes(int64(len(text)))
	loop(b, func() { GuardZHHyphens(text) })
}

// The whole of what a request pays: OpenMOSS's pipeline with both WeText
// grammars, on a one-sentence request (zh and en) and on 4,096 characters
// of mixed text.
func BenchmarkOpenMOSSSentenceZH(b *testing.B) {
	p := OpenMOSS()
	b.SetBytes(int64(len(benchSentence)))
	loop(b, func() { p.Normalize(benchSentence, Auto, All) })
}

func BenchmarkOpenMOSSSentenceEN(b *testing.B) {
	const s = "On May 5th, 2024, the price rose 12.5% to $3.20 per 10 km, said Dr. Smith at 3:30 pm."
	p := OpenMOSS()
	b.SetBytes(int64(len(s)))
	loop(b, func() { p.Normalize(s, Auto, All) })
}

func BenchmarkOpenMOSSMixed4096(b *testing.B) {
	p := OpenMOSS()
	text := benchMixed()
	b.SetBytes(int64(len(text)))
	loop(b, func() { p.Normalize(text, Auto, All) })
}
