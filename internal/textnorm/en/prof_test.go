package en

import (
	"strings"
	"testing"
)

func BenchmarkMixed(b *testing.B) {
	n := New()
	para := "The National Map, accessed April 1, 2011. In 1999, the U.S.A. had 270 million people; " +
		"she ran 5km in 25 minutes and paid $12.05 (about €11) at 03:43 p.m. Call +1 123-123-5678. "
	s := strings.Repeat(para, 30)[:4096]
	for b.Loop() {
		n.Normalize(s)
	}
}
