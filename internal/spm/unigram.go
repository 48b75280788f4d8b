package spm

import (
	"errors"
	"math"
	"strings"
)

// Unigram segmentation as in SentencePiece's unigram_model.cc
// (EncodeOptimized): a Viterbi pass over byte positions that keeps, for each
// end position, the best-scoring path ending there. User-defined pieces get
// the score length*max_score-0.1 so that they always win; a character no
// piece covers becomes <unk> with score min_score-10. The C++ arithmetic
// mixes float and double in a particular way, reproduced here so that
// ties break identically.

const (
	unkPenalty     = float32(10)
	unigramEpsilon = float32(1e-7)
)

func (m *Model) initUnigram() error {
	if len(m.normal) == 0 {
		return errors.New("unigram model has no normal, user-defined or unused pieces")
	}
	m.unigramTrie = newByteTrie()
	seen := make(map[string]bool, len(m.normal))
	for id, p := range m.pieces {
		switch p.typ {
		case typeNormal, typeUserDefined, typeUnused:
		default:
			continue
		}
		key := p.piece
		if i := strings.IndexByte(key, 0); i >= 0 {
			key = key[:i]
		}
		if seen[key] {
			// Darts-clone refuses duplicate keys.
			return errors.New("unigram model: cannot build the piece trie (pieces equal up to a NUL byte)")
		}
		seen[key] = true
		m.unigramTrie.insert(key, int32(id))
	}
	// upstream starts from FLT_MAX and FLT_MIN (the smallest positive
	// normal float, not the lowest float) and uses std::min/std::max.
	m.unigramMin = math.MaxFloat32
	m.unigramMax = math.Float32frombits(0x00800000)
	for _, p := range m.pieces {
		if p.typ != typeNormal {
			continue
		}
		if p.score < m.unigramMin {
			m.unigramMin = p.score
		}
		if m.unigramMax < p.score {
			m.unigramMax = p.score
		}
	}
	return nil
}

// userDefinedScore is the score a user-defined piece of n bytes gets.
func (m *Model) userDefinedScore(n int) float64 {
	return float64(float32(n)*m.unigramMax) - 0.1
}

type bestPath struct {
	score float32
	start int32 // start of the last piece; -1 while unreached
	id    int32
}

func (m *Model) segmentUnigram(s string) []segment {
	size := len(s)
	unkScore := m.unigramMin - unkPenalty
	best := make([]bestPath, size+1)
	for i := range best {
		best[i] = bestPath{start: -1, id: -1}
	}
	for start := 0; start < size; {
		till := best[start].score
		mblen := min(oneCharLen(s[start]), size-start)
		hasSingle := false
		m.unigramTrie.prefixes(s[start:], func(n int, id int32) {
			p := &m.pieces[id]
			if p.typ == typeUnused {
				return
			}
			var score float64
			if p.typ == typeUserDefined {
				score = m.userDefinedScore(n)
			} else {
				score = float64(p.score)
			}
			cand := score + float64(till)
			t := &best[start+n]
			if t.start == -1 || cand > float64(t.score) {
				*t = bestPath{score: float32(cand), start: int32(start), id: id}
			}
			if n == mblen {
				hasSingle = true
			}
		})
		if !hasSingle {
			cand := unkScore + till
			t := &best[start+mblen]
			if t.start == -1 || cand > t.score {
				*t = bestPath{score: cand, start: int32(start), id: m.unkID}
			}
		}
		start += mblen
	}
	var out []segment
	for end := size; end > 0; {
		node := best[end]
		if node.start < 0 {
			break // unreachable: every character boundary gets a node
		}
		out = append(out, segment{s[node.start:end], node.id})
		end = int(node.start)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// unigramEquivalent is the unigram model's VerifyOutputsEquivalent used by
// the self-test: two segmentations (pieces joined by spaces) are
// equivalent when their scores agree within 1e-7.
func (m *Model) unigramEquivalent(expected, actual string) bool {
	score := func(joined string) float32 {
		var total float32
		unkScore := m.unigramMin - unkPenalty
		for _, p := range strings.Split(joined, " ") {
			id := m.unigramPieceToID(p)
			switch {
			case id == m.unkID:
				total += unkScore
			case m.pieces[id].typ == typeUserDefined:
				total = float32(float64(total) + m.userDefinedScore(len(p)))
			default:
				total += m.pieces[id].score
			}
		}
		return total
	}
	d := score(expected) - score(actual)
	return !(d > unigramEpsilon || -d > unigramEpsilon)
}

// unigramPieceToID is the unigram model's PieceToId, which looks pieces up
// in its trie rather than in the piece map.
func (m *Model) unigramPieceToID(p string) int32 {
	if id, ok := m.reserved[p]; ok {
		return id
	}
	id := int32(-1)
	m.unigramTrie.prefixes(p, func(n int, v int32) {
		if n == len(p) {
			id = v
		}
	})
	if id < 0 {
		return m.unkID
	}
	return id
}
