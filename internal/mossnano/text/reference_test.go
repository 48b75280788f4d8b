package text

// refSplitter is the splitter as it was before token-count bounds (commit
// 2c0962c): it encodes every candidate prefix, which is quadratic in the
// length of an unpunctuated clause. TestSplitEquivalence checks the current
// splitter against it, so keep its inputs short.

type refSplitter struct {
	tok Tokenizer
	max int
}

func (s *refSplitter) count(rs []rune) int { return len(s.tok.Encode(string(rs))) }

// refSplitByBudget is _split_text_by_token_budget.
func (s *refSplitter) refSplitByBudget(t []rune) [][]rune {
	rest := strip(t)
	var pieces [][]rune
	for len(rest) > 0 {
		if s.count(rest) <= s.max {
			pieces = append(pieces, rest)
			break
		}
		// Longest prefix that fits, by binary search on its length.
		best := 1
		for lo, hi := 1, len(rest); lo <= hi; {
			mid := (lo + hi) / 2
			cand := strip(rest[:mid])
			switch {
			case len(cand) == 0:
				lo = mid + 1
			case s.count(cand) <= s.max:
				best = mid
				lo = mid + 1
			default:
				hi = mid - 1
			}
		}
		// Prefer to cut after a boundary among the prefix's last 24
		// characters (upstream scans range(len-1, len-25, -1)).
		cut := best
		for i := best - 1; i > best-25 && i >= 0; i-- {
			if boundary[rest[i]] {
				cut = i + 1
				break
			}
		}
		piece := strip(rest[:cut])
		if len(piece) == 0 {
			piece = strip(rest[:best])
			cut = best
		}
		pieces = append(pieces, piece)
		rest = strip(rest[cut:])
	}
	return pieces
}

// split was _split_text_into_best_sentences for a positive budget.
func (s *refSplitter) split(text string) []string {
	prepared := prepare(text)
	sentences := splitByPunctuation(prepared, sentenceEnd)
	if len(sentences) == 0 {
		sentences = [][]rune{strip(prepared)}
	}
	var pieces []piece
	add := func(t []rune, n int) { pieces = append(pieces, piece{n, t}) }
	for _, sentence := range sentences {
		sentence = strip(sentence)
		if len(sentence) == 0 {
			continue
		}
		if n := s.count(sentence); n <= s.max {
			add(sentence, n)
			continue
		}
		clauses := splitByPunctuation(sentence, clauseSplit)
		if len(clauses) <= 1 {
			clauses = [][]rune{sentence}
		}
		for _, clause := range clauses {
			clause = strip(clause)
			if len(clause) == 0 {
				continue
			}
			if n := s.count(clause); n <= s.max {
				add(clause, n)
				continue
			}
			for _, p := range s.refSplitByBudget(clause) {
				if p = strip(p); len(p) > 0 {
					add(p, s.count(p))
				}
			}
		}
	}

	var chunks []string
	var cur []rune
	curTokens := 0
	for _, p := range pieces {
		switch {
		case len(cur) == 0:
			cur, curTokens = p.text, p.tokens
		case curTokens+p.tokens > s.max:
			chunks = append(chunks, string(strip(cur)))
			cur, curTokens = p.text, p.tokens
		default:
			cur = join(cur, p.text)
			curTokens = s.count(cur)
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, string(strip(cur)))
	}
	if len(chunks) == 0 {
		chunks = []string{string(strip(prepared))}
	}
	return chunks
}
