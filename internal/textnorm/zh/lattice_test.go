package zh

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveMath offers every math chain token starting at i, enumerating the
// chains one by one (number (op number)*), as a reference for the lattice
// states of mathStep.
func naiveMath(p *parser, q int, s sink, depth int) {
	for _, n := range p.nums(q, false) {
		s.put(n.end, wMath, "")
		if depth == 0 {
			continue
		}
		p.match(p.t.operator, p.skipSpace(n.end), func(oe int, _ string) {
			naiveMath(p, p.skipSpace(oe), s, depth-1)
		})
	}
}

// naiveCost is the cheapest tagging cost computed with whole tokens only.
func naiveCost(n *Normalizer, s string) int {
	p := n.newParser(s)
	l := &lattice{cost: make([]int, len(p.r)+1), back: make([]step, len(p.r)+1)}
	for i := 1; i < len(l.cost); i++ {
		l.cost[i] = inf
	}
	for i := range p.r {
		l.base, l.from = l.cost[i], int32(i)
		p.numBuf = p.numBuf[:0]
		for _, r := range rules {
			r(p, i, l)
		}
		naiveMath(p, i, l, len(p.r))
		l.put(i+1, wChar, "")
	}
	return l.cost[len(p.r)]
}

// TestLatticeCost checks on random token soup that the parse loop (math
// chains as lattice states, rules skipped where none can start) finds paths
// exactly as cheap as plain enumeration of whole tokens.
func TestLatticeCost(t *testing.T) {
	pieces := []string{"1", "2", "0", "5", "12", "+", "-", "=", ":", "~", " ", "/", ".", "%", "个", "km",
		"k", "年", "月", "约", "中国", "$", "儿", "a", "×", ">", "<=", "到", ",", "尾号", "尾号是1234", "13501234567"}
	rng := rand.New(rand.NewPCG(1, 2))
	n := NewWithOptions(UpstreamDefaults())
	for k := 0; k < 2000; k++ {
		var b strings.Builder
		for m := rng.IntN(14); m >= 0; m-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		p := n.newParser(s)
		l := n.run(p, rules, true, true)
		if got, want := l.cost[len(p.r)], naiveCost(n, s); got != want {
			t.Errorf("%q: lattice cost %d; enumeration %d", s, got, want)
		}
	}
}
