package spm

// BPE segmentation as in SentencePiece's bpe_model.cc: the normalized text
// is split into characters (user-defined symbols are single, frozen
// symbols), every adjacent pair that forms a piece goes into a priority
// queue keyed by the piece's score (highest first; on equal scores the
// leftmost pair), and pairs are merged until the queue is empty. Queue
// entries made stale by earlier merges are recognized by their size and
// skipped. Merged UNUSED pieces are split back into the pieces they were
// made of.

type bpeSymbol struct {
	prev, next int32 // neighbour indexes, -1 at the ends
	start, end int32 // byte range in the normalized text; empty once merged away
	freeze     bool  // a user-defined symbol, never merged
}

type bpePair struct {
	score       float32
	left, right int32
	size        int32 // byte length of the merged piece when queued
}

// before reports whether a is popped before b.
func (a *bpePair) before(b *bpePair) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

// pairQueue is a binary max-heap of bpePairs.
type pairQueue []bpePair

func (q *pairQueue) push(p bpePair) {
	h := append(*q, p)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h[i].before(&h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	*q = h
}

func (q *pairQueue) pop() bpePair {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		best := l
		if r := l + 1; r < len(h) && h[r].before(&h[l]) {
			best = r
		}
		if !h[best].before(&h[i]) {
			break
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
	*q = h
	return top
}

// userPrefix is PrefixMatcher::PrefixMatch on the user-defined symbols: the
// length of the longest symbol at the start of s, or else of one character
// (judged by its lead byte, capped at len(s)).
func (m *Model) userPrefix(s string) (n int, found bool) {
	if m.user != nil {
		if n, ok := m.user.longestPrefix(s, maxUserMatches); ok {
			return n, true
		}
	}
	return min(len(s), oneCharLen(s[0])), false
}

func (m *Model) segmentBPE(s string) []segment {
	symbols := make([]bpeSymbol, 0, len(s))
	for i := 0; i < len(s); {
		n, freeze := m.userPrefix(s[i:])
		idx := int32(len(symbols))
		next := idx + 1
		if i+n >= len(s) {
			next = -1
		}
		symbols = append(symbols, bpeSymbol{prev: idx - 1, next: next, start: int32(i), end: int32(i + n), freeze: freeze})
		i += n
	}

	var revMerge map[string][2]string // only for models with UNUSED pieces
	queue := make(pairQueue, 0, len(symbols))
	addPair := func(left, right int32) {
		if left < 0 || right < 0 || symbols[left].freeze || symbols[right].freeze {
			return
		}
		piece := s[symbols[left].start:symbols[right].end]
		id, ok := m.normal[piece]
		if !ok {
			return
		}
		queue.push(bpePair{score: m.pieces[id].score, left: left, right: right, size: int32(len(piece))})
		if m.pieces[id].typ == typeUnused {
			if revMerge == nil {
				revMerge = make(map[string][2]string)
			}
			revMerge[piece] = [2]string{
				s[symbols[left].start:symbols[left].end],
				s[symbols[right].start:symbols[right].end],
			}
		}
	}
	for i := int32(1); i < int32(len(symbols)); i++ {
		addPair(i-1, i)
	}

	for len(queue) > 0 {
		top := queue.pop()
		l, r := &symbols[top.left], &symbols[top.right]
		if l.start == l.end || r.start == r.end || (l.end-l.start)+(r.end-r.start) != top.size {
			continue // stale
		}
		l.end = r.end
		l.next = r.next
		if r.next >= 0 {
			symbols[r.next].prev = top.left
		}
		r.end = r.start
		addPair(l.prev, top.left)
		addPair(top.left, l.next)
	}

	out := make([]segment, 0, len(symbols)/2+1)
	for i := int32(0); i >= 0 && int(i) < len(symbols); i = symbols[i].next {
		out = m.resegment(s[symbols[i].start:symbols[i].end], revMerge, out)
	}
	return out
}

// resegment appends piece to out, splitting merged UNUSED pieces back into
// the pieces they were made of.
func (m *Model) resegment(piece string, revMerge map[string][2]string, out []segment) []segment {
	id := m.pieceToID(piece)
	if m.pieces[id].typ != typeUnused {
		return append(out, segment{piece, id})
	}
	parts, ok := revMerge[piece]
	if !ok {
		return append(out, segment{piece, id})
	}
	out = m.resegment(parts[0], revMerge, out)
	return m.resegment(parts[1], revMerge, out)
}
