package zh

import (
	"strings"
	"testing"
)

const benchSentence = "2024年5月1日，价格是￥13.5，重达25kg，可以打我手机13501234567。"

func BenchmarkSentence(b *testing.B) {
	n := New()
	b.SetBytes(int64(len(benchSentence)))
	for b.Loop() {
		n.Normalize(benchSentence)
	}
}

func BenchmarkMixed4K(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 4096 {
		sb.WriteString("共465篇，约315万字。同比增长6.3%，总量的1/5以上。8月16号12:00之前，比分定格在78:96。")
		sb.WriteString("The iPhone 15 costs $799 in 2023. 这儿有只鸟儿，最高气温38°C，面积是10km²。")
	}
	in := sb.String()
	n := New()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		n.Normalize(in)
	}
}

// BenchmarkTables measures parsing the embedded tables (done once per
// process on first use).
func BenchmarkTables(b *testing.B) {
	for b.Loop() {
		if _, err := parseTables(); err != nil {
			b.Fatal(err)
		}
	}
}
