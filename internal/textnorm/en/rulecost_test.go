package en

import (
	"strings"
	"testing"
	"time"
)

func TestRuleCost(t *testing.T) {
	n := New()
	para := "The National Map, accessed April 1, 2011. In 1999, the U.S.A. had 270 million people; " +
		"she ran 5km in 25 minutes and paid $12.05 (about €11) at 03:43 p.m. Call +1 123-123-5678. "
	s := strings.Repeat(para, 30)[:4096]
	rs := []rune(s)
	rules := map[string]func(*matcher, *cands, int){
		"cardinal": (*matcher).cardinalRule, "ordinal": (*matcher).ordinalRule, "word": (*matcher).wordRule,
		"date": (*matcher).dateRule, "decimal": (*matcher).decimalRule, "fraction": (*matcher).fractionRule,
		"time": (*matcher).timeRule, "measure": (*matcher).measureRule, "money": (*matcher).moneyRule,
		"telephone": (*matcher).telephoneRule, "electronic": (*matcher).electronicRule, "serial": (*matcher).serialRule,
		"whitelist": (*matcher).whitelistRule, "range": (*matcher).rangeRule,
	}
	calls := 0
	for name, rule := range rules {
		st := cpuNow()
		for it := 0; it < 20; it++ {
			m := newMatcher(n, rs)
			for p := range rs {
				if isSpace(rs[p]) {
					continue
				}
				c := &cands{m: m}
				rule(m, c, p)
				calls++
			}
		}
		t.Logf("%-10s %v per 4kB (all positions)", name, (cpuNow()-st)/20)
	}
	st := cpuNow()
	for it := 0; it < 20; it++ {
		m := newMatcher(n, rs)
		for p := range rs {
			m.punct(p)
		}
	}
	t.Logf("%-10s %v", "punct", (cpuNow()-st)/20)
	_ = time.Now
}
