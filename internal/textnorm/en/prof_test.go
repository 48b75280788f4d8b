package en

import (
	"strings"
	"testing"
)

func BenchmarkPlain(b *testing.B) {
	n := New()
	s := strings.Repeat("the quick brown fox jumps over the lazy dog and then it runs away. ", 62)[:4096]
	for b.Loop() {
		n.Normalize(s)
	}
}
