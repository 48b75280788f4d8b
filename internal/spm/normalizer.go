package spm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// spaceSymbol is U+2581 LOWER ONE EIGHTH BLOCK, which stands for a space in
// pieces when escape_whitespaces is on.
const spaceSymbol = "\u2581"

// maxCharsmapResults is the number of prefix matches SentencePiece looks at
// when it searches the charsmap trie (Normalizer::kMaxTrieResultsSize).
const maxCharsmapResults = 32

// charsmap is a precompiled normalization rule set: a Darts-clone double
// array whose keys are UTF-8 byte sequences and whose values are offsets
// of NUL-terminated replacement strings in a blob.
//
// Blob layout: uint32 little-endian trie size in bytes, the trie units
// (uint32 little endian each), then the replacement strings.
type charsmap struct {
	units       []uint32
	replacement string
}

func newCharsmap(blob []byte) (*charsmap, error) {
	if len(blob) <= 4 {
		return nil, errors.New("precompiled charsmap is broken: shorter than its header")
	}
	size := binary.LittleEndian.Uint32(blob)
	rest := blob[4:]
	if uint64(size) > uint64(len(rest)) {
		return nil, fmt.Errorf("precompiled charsmap is broken: trie size %d exceeds the blob (%d bytes)", size, len(rest))
	}
	n := int(size) / 4
	if n == 0 {
		return nil, errors.New("precompiled charsmap is broken: empty trie")
	}
	units := make([]uint32, n)
	for i := range units {
		units[i] = binary.LittleEndian.Uint32(rest[4*i:])
	}
	return &charsmap{units: units, replacement: string(rest[size:])}, nil
}

// Darts-clone unit accessors.
func dartsHasLeaf(u uint32) bool                   { return (u>>8)&1 == 1 }
func dartsValue(u uint32) uint32                   { return u & (1<<31 - 1) }
func dartsLabel(u uint32) uint32                   { return u & (1<<31 | 0xff) }
func dartsOffset(u uint32) uint32                  { return (u >> 10) << ((u & (1 << 9)) >> 6) }
func dartsInRange(pos uint32, units []uint32) bool { return uint64(pos) < uint64(len(units)) }

// lookup finds the longest rule whose key is a prefix of s, considering
// only the first maxCharsmapResults matches like SentencePiece. It returns
// the replacement and the number of bytes of s the rule consumes, or
// n == 0 when no rule matches.
func (c *charsmap) lookup(s string) (repl string, n int) {
	units := c.units
	pos := dartsOffset(units[0])
	value := uint32(0)
	found := 0
	for i := 0; i < len(s); i++ {
		b := uint32(s[i])
		pos ^= b
		if !dartsInRange(pos, units) {
			break
		}
		u := units[pos]
		if dartsLabel(u) != b {
			break
		}
		pos ^= dartsOffset(u)
		if dartsHasLeaf(u) {
			if !dartsInRange(pos, units) {
				break
			}
			if found < maxCharsmapResults {
				value = dartsValue(units[pos])
				n = i + 1
			}
			found++
		}
	}
	if n == 0 {
		return "", 0
	}
	if uint64(value) >= uint64(len(c.replacement)) {
		return "", n
	}
	repl = c.replacement[value:]
	if j := strings.IndexByte(repl, 0); j >= 0 {
		repl = repl[:j]
	}
	return repl, n
}

// normalizer is SentencePiece's Normalizer: charsmap rules, whitespace
// handling and protection of user-defined symbols.
type normalizer struct {
	cmap                    *charsmap // nil: identity
	user                    *byteTrie // user-defined symbols, copied unchanged; may be nil
	addDummyPrefix          bool      // prepend a space (append, with treatWhitespaceAsSuffix)
	removeExtraWhitespaces  bool      // drop leading/trailing spaces, collapse runs
	escapeWhitespaces       bool      // write spaces as U+2581
	treatWhitespaceAsSuffix bool      // from the trainer spec
}

func newNormalizer(spec *protoNormalizerSpec, treatWhitespaceAsSuffix bool, user *byteTrie) (*normalizer, error) {
	n := &normalizer{
		user:                    user,
		addDummyPrefix:          spec.addDummyPrefix,
		removeExtraWhitespaces:  spec.removeExtraWhitespaces,
		escapeWhitespaces:       spec.escapeWhitespaces,
		treatWhitespaceAsSuffix: treatWhitespaceAsSuffix,
	}
	if len(spec.precompiledCharsmap) > 0 {
		c, err := newCharsmap(spec.precompiledCharsmap)
		if err != nil {
			return nil, err
		}
		n.cmap = c
	}
	return n, nil
}

// prefix normalizes the first unit of s: a user-defined symbol (unchanged),
// else the longest charsmap rule, else one UTF-8 character (an invalid
// byte becomes U+FFFD). It returns the output and the bytes consumed.
func (n *normalizer) prefix(s string) (string, int) {
	if n.user != nil {
		if l, ok := n.user.longestPrefix(s, maxUserMatches); ok {
			return s[:l], l
		}
	}
	if n.cmap != nil {
		if repl, l := n.cmap.lookup(s); l > 0 {
			return repl, l
		}
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		return "\uFFFD", 1
	}
	return s[:size], size
}

// normalize returns the normalized form of s that the model segments.
func (n *normalizer) normalize(s string) string {
	if s == "" {
		return ""
	}
	if n.removeExtraWhitespaces {
		for s != "" {
			out, l := n.prefix(s)
			if out != " " {
				break
			}
			s = s[l:]
		}
		if s == "" {
			return ""
		}
	}
	space := " "
	if n.escapeWhitespaces {
		space = spaceSymbol
	}
	out := make([]byte, 0, len(s)*3/2+8)
	if !n.treatWhitespaceAsSuffix && n.addDummyPrefix {
		out = append(out, space...)
	}
	isPrevSpace := n.removeExtraWhitespaces
	for s != "" {
		sp, l := n.prefix(s)
		if isPrevSpace {
			for len(sp) > 0 && sp[0] == ' ' {
				sp = sp[1:]
			}
		}
		if sp != "" {
			for i := 0; i < len(sp); i++ {
				if n.escapeWhitespaces && sp[i] == ' ' {
					out = append(out, spaceSymbol...)
				} else {
					out = append(out, sp[i])
				}
			}
			isPrevSpace = sp[len(sp)-1] == ' '
		}
		s = s[l:]
		if !n.removeExtraWhitespaces {
			isPrevSpace = false
		}
	}
	if n.removeExtraWhitespaces {
		for len(out) >= len(space) && string(out[len(out)-len(space):]) == space {
			out = out[:len(out)-len(space)]
		}
	}
	if n.treatWhitespaceAsSuffix && n.addDummyPrefix {
		out = append(out, space...)
	}
	return string(out)
}
