package en

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestCPU(t *testing.T) {
	n := New()
	s1 := "Dr. Smith paid $5.50 for 3 apples on Jan 3rd, 2020 at 10:30am."
	para := "The National Map, accessed April 1, 2011. In 1999, the U.S.A. had 270 million people; " +
		"she ran 5km in 25 minutes and paid $12.05 (about €11) at 03:43 p.m. Call +1 123-123-5678. "
	var sb strings.Builder
	for sb.Len() < 4096 {
		sb.WriteString(para)
	}
	s4 := sb.String()[:4096]
	plain := strings.Repeat("the quick brown fox jumps over the lazy dog and then it runs away. ", 62)[:4096]
	for _, c := range []struct {
		name string
		s    string
		n    int
	}{{"sentence", s1, 2000}, {"4kB", s4, 50}, {"4kB plain", plain, 50}} {
		st := cpuNow()
		for i := 0; i < c.n; i++ {
			n.Normalize(c.s)
		}
		t.Logf("%s: %v CPU/op", c.name, (cpuNow()-st)/time.Duration(c.n))
	}
}
