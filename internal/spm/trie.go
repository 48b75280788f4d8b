package spm

import "strings"

// maxUserMatches is the number of prefix matches SentencePiece's
// PrefixMatcher looks at (kResultSize); the longest of them wins.
const maxUserMatches = 64

// byteTrie maps byte strings to ids and answers prefix queries. It stands in
// for the Darts-clone tries SentencePiece builds at load time, so like them
// it truncates keys at the first NUL byte (Darts keys are C strings).
type byteTrie struct {
	root  [256]int32       // child of the root per byte; 0 = none
	next  map[uint64]int32 // (node<<8 | byte) -> child, for nodes other than the root
	value []int32          // per node: id of the key ending there, or -1
}

func newByteTrie() *byteTrie {
	return &byteTrie{next: make(map[uint64]int32), value: []int32{-1}}
}

// insert adds key with id v; an existing key keeps its first id. Keys that
// are empty after NUL truncation are ignored.
func (t *byteTrie) insert(key string, v int32) {
	if i := strings.IndexByte(key, 0); i >= 0 {
		key = key[:i]
	}
	if key == "" {
		return
	}
	node := int32(0)
	for i := 0; i < len(key); i++ {
		child := t.child(node, key[i])
		if child == 0 {
			child = int32(len(t.value))
			t.value = append(t.value, -1)
			if node == 0 {
				t.root[key[i]] = child
			} else {
				t.next[uint64(node)<<8|uint64(key[i])] = child
			}
		}
		node = child
	}
	if t.value[node] < 0 {
		t.value[node] = v
	}
}

func (t *byteTrie) child(node int32, b byte) int32 {
	if node == 0 {
		return t.root[b]
	}
	return t.next[uint64(node)<<8|uint64(b)]
}

// longestPrefix returns the length of the longest key that is a prefix of
// s, looking only at the first limit matches (shortest first).
func (t *byteTrie) longestPrefix(s string, limit int) (n int, ok bool) {
	node := int32(0)
	found := 0
	for i := 0; i < len(s); i++ {
		node = t.child(node, s[i])
		if node == 0 {
			break
		}
		if t.value[node] >= 0 {
			if found < limit {
				n = i + 1
			}
			found++
		}
	}
	return n, found > 0
}

// prefixes calls fn(length, id) for every key that is a prefix of s, in
// increasing length.
func (t *byteTrie) prefixes(s string, fn func(n int, id int32)) {
	node := int32(0)
	for i := 0; i < len(s); i++ {
		node = t.child(node, s[i])
		if node == 0 {
			return
		}
		if id := t.value[node]; id >= 0 {
			fn(i+1, id)
		}
	}
}

// oneCharLen is SentencePiece's string_util::OneCharLen: the length of a
// UTF-8 sequence judged from its lead byte alone.
func oneCharLen(lead byte) int {
	return int("\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x02\x02\x03\x04"[lead>>4])
}
