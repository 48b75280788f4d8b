// Package spm is a pure-Go SentencePiece tokenizer that produces exactly the
// ids of SentencePieceProcessor.encode(text, out_type=int) and the text of
// SentencePieceProcessor.decode(ids).
//
// It reads a serialized sentencepiece.ModelProto (tokenizer.model) and
// implements what encoding and decoding use from it:
//
//   - the normalizer: the precompiled charsmap (for example nmt_nfkc) with
//     SentencePiece's longest-match and invalid-UTF-8 rules,
//     add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces,
//     treat_whitespace_as_suffix, and the denormalizer on decode;
//   - user-defined pieces, matched whole (longest match) in the input and
//     never normalized or merged;
//   - BPE segmentation with bpe_model.cc's priority queue (highest piece
//     score first, leftmost on ties), resegmentation of UNUSED pieces,
//     byte fallback (<0xNN> pieces) or unknown ids (consecutive unknown
//     characters become one <unk>);
//   - Unigram segmentation with SentencePiece's optimized Viterbi.
//
// Control and unknown pieces (<s>, </s>, <pad>, <unk>) are never produced
// from text: a literal "<s>" in the input is ordinary text. Word and char
// models are rejected by Parse.
//
// The behaviour was checked against SentencePiece 0.1.97 (differential tests
// in testdata/); the encoder, normalizer and decoder code it follows is
// unchanged up to 0.2.0.
//
// A Model is immutable after Parse and safe for concurrent use.
package spm

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unicode/utf8"
)

// defaultUnkSurface is what <unk> decodes to unless the model says otherwise.
const defaultUnkSurface = " \u2047 "

type pieceInfo struct {
	piece string
	score float32
	typ   int32
}

// Model is a loaded SentencePiece model.
type Model struct {
	kind     int32 // modelBPE or modelUnigram
	pieces   []pieceInfo
	normal   map[string]int32 // NORMAL, USER_DEFINED and UNUSED pieces
	reserved map[string]int32 // CONTROL, UNKNOWN and BYTE pieces
	unkID    int32

	byteFallback bool
	byteID       [256]int32 // id of <0xNN>, valid when byteFallback

	user        *byteTrie // user-defined symbols; nil when there are none
	norm        *normalizer
	denorm      *normalizer // nil when the model has no denormalizer
	unkSurface  string
	unigramTrie *byteTrie
	unigramMin  float32 // lowest NORMAL score
	unigramMax  float32 // highest NORMAL score (at least FLT_MIN, as upstream)
}

// Load reads and parses a tokenizer.model file.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spm: %w", err)
	}
	m, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("spm: %s: %w", path, err)
	}
	return m, nil
}

// Parse decodes a serialized ModelProto and checks it the way
// SentencePieceProcessor.Load does (non-empty unique pieces, exactly one
// unknown piece, all 256 byte pieces when byte_fallback is on, a readable
// charsmap, passing self-test samples). It never panics on malformed input.
func Parse(data []byte) (*Model, error) {
	m, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("spm: %w", err)
	}
	return m, nil
}

func parse(data []byte) (*Model, error) {
	p, err := parseModelProto(data)
	if err != nil {
		return nil, fmt.Errorf("parse model proto: %w", err)
	}
	m := &Model{
		kind:         p.trainer.modelType,
		normal:       make(map[string]int32),
		reserved:     make(map[string]int32),
		unkID:        -1,
		byteFallback: p.trainer.byteFallback,
		unkSurface:   defaultUnkSurface,
	}
	switch m.kind {
	case modelBPE, modelUnigram:
	case modelWord:
		return nil, errors.New("unsupported model type WORD (only BPE and UNIGRAM)")
	case modelChar:
		return nil, errors.New("unsupported model type CHAR (only BPE and UNIGRAM)")
	}
	if p.trainer.hasUnkSurface {
		// The C++ decoder copies unk_surface through a C string.
		m.unkSurface = p.trainer.unkSurface
		if i := strings.IndexByte(m.unkSurface, 0); i >= 0 {
			m.unkSurface = m.unkSurface[:i]
		}
	}
	if len(p.pieces) > math.MaxInt32 {
		return nil, errors.New("too many pieces")
	}
	var bytesFound [256]bool
	m.pieces = make([]pieceInfo, len(p.pieces))
	for i, pp := range p.pieces {
		id := int32(i)
		m.pieces[i] = pieceInfo{piece: pp.piece, score: pp.score, typ: pp.typ}
		if pp.piece == "" {
			return nil, fmt.Errorf("piece %d is empty", i)
		}
		dict := m.reserved
		switch pp.typ {
		case typeNormal, typeUserDefined, typeUnused:
			dict = m.normal
		}
		if _, dup := dict[pp.piece]; dup {
			return nil, fmt.Errorf("piece %q (id %d) is already defined", pp.piece, i)
		}
		dict[pp.piece] = id
		switch pp.typ {
		case typeUserDefined:
			if m.user == nil {
				m.user = newByteTrie()
			}
			m.user.insert(pp.piece, id)
		case typeUnknown:
			if m.unkID >= 0 {
				return nil, fmt.Errorf("unknown piece defined twice (ids %d and %d)", m.unkID, i)
			}
			m.unkID = id
		case typeByte:
			if !m.byteFallback {
				return nil, fmt.Errorf("byte piece %q (id %d) found although byte_fallback is false", pp.piece, i)
			}
			b := pieceToByte(pp.piece)
			if b < 0 {
				return nil, fmt.Errorf("byte piece %q (id %d) is invalid", pp.piece, i)
			}
			bytesFound[b] = true
			m.byteID[b] = id
		}
	}
	if m.unkID < 0 {
		return nil, errors.New("no unknown piece defined")
	}
	if m.byteFallback {
		for b, ok := range bytesFound {
			if !ok {
				return nil, fmt.Errorf("byte_fallback is on but there is no byte piece <0x%02X>", b)
			}
		}
	}
	if m.norm, err = newNormalizer(&p.normalizer, p.trainer.treatWhitespaceAsSuffix, m.user); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if p.hasDenorm && len(p.denormalizer.precompiledCharsmap) > 0 {
		if m.denorm, err = newNormalizer(&p.denormalizer, false, nil); err != nil {
			return nil, fmt.Errorf("denormalizer: %w", err)
		}
	}
	if m.kind == modelUnigram {
		if err := m.initUnigram(); err != nil {
			return nil, err
		}
	}
	for _, s := range p.selfTest {
		if err := m.selfTest(s); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// selfTest runs one of the model's self-test samples, as Load does.
func (m *Model) selfTest(s protoSample) error {
	result := strings.Join(m.EncodePieces(s.input), " ")
	if result == s.expected {
		return nil
	}
	if m.kind == modelUnigram && m.unigramEquivalent(s.expected, result) {
		return nil
	}
	return fmt.Errorf("self-test failed: %q encodes to %q, model expects %q", s.input, result, s.expected)
}

// pieceToByte parses a byte piece "<0xNN>" (upper-case hex, as
// SentencePiece writes them) and returns -1 for anything else.
func pieceToByte(p string) int {
	if len(p) != 6 || p[:3] != "<0x" || p[5] != '>' {
		return -1
	}
	hi, lo := hexUpper(p[3]), hexUpper(p[4])
	if hi < 0 || lo < 0 {
		return -1
	}
	return hi<<4 | lo
}

func hexUpper(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// pieceToID is ModelInterface::PieceToId: reserved pieces first, then the
// others, else the unknown id.
func (m *Model) pieceToID(piece string) int32 {
	if id, ok := m.reserved[piece]; ok {
		return id
	}
	if id, ok := m.normal[piece]; ok {
		return id
	}
	return m.unkID
}

// PieceToID returns the id of a piece. ok is false when the model has no
// such piece; id is then the unknown piece's id, as in SentencePiece.
func (m *Model) PieceToID(piece string) (id int, ok bool) {
	if id, ok := m.reserved[piece]; ok {
		return int(id), true
	}
	if id, ok := m.normal[piece]; ok {
		return int(id), true
	}
	return int(m.unkID), false
}

// IDToPiece returns the piece of an id, or "" when id is out of range.
func (m *Model) IDToPiece(id int) string {
	if id < 0 || id >= len(m.pieces) {
		return ""
	}
	return m.pieces[id].piece
}

// VocabSize returns the number of pieces.
func (m *Model) VocabSize() int { return len(m.pieces) }

// Normalize returns text as the model segments it: normalized by the
// charsmap, whitespace handled as the normalizer spec says (spaces are
// written U+2581 when escape_whitespaces is on), user-defined symbols
// unchanged.
func (m *Model) Normalize(text string) string { return m.norm.normalize(text) }

// Encode segments text and returns the piece ids, exactly like
// SentencePieceProcessor.encode(text, out_type=int) without extra options.
func (m *Model) Encode(text string) []int {
	segs := m.encodePieces(text)
	if len(segs) == 0 {
		return nil
	}
	ids := make([]int, len(segs))
	for i, s := range segs {
		ids[i] = int(s.id)
	}
	return ids
}

// EncodePieces is Encode returning pieces instead of ids, like
// SentencePieceProcessor.encode(text, out_type=str): byte pieces are
// "<0xNN>" and a run of unknown characters is one piece holding them all.
func (m *Model) EncodePieces(text string) []string {
	segs := m.encodePieces(text)
	if len(segs) == 0 {
		return nil
	}
	pieces := make([]string, len(segs))
	for i, s := range segs {
		pieces[i] = s.piece
	}
	return pieces
}

// segment is one (piece, id) of a segmentation.
type segment struct {
	piece string
	id    int32
}

// encodePieces normalizes and segments text, then handles unknown pieces
// as SentencePieceProcessor::PopulateSentencePieceText does: with byte
// fallback an unknown piece becomes the byte pieces of its UTF-8 bytes,
// without it a run of unknown pieces becomes one unknown piece.
func (m *Model) encodePieces(text string) []segment {
	segs := m.segment(m.norm.normalize(text))
	if m.byteFallback {
		n, unknown := 0, false
		for _, s := range segs {
			if m.pieces[s.id].typ == typeUnknown {
				n += len(s.piece)
				unknown = true
			} else {
				n++
			}
		}
		if !unknown {
			return segs
		}
		out := make([]segment, 0, n)
		for _, s := range segs {
			if m.pieces[s.id].typ != typeUnknown {
				out = append(out, s)
				continue
			}
			for i := 0; i < len(s.piece); i++ {
				id := m.byteID[s.piece[i]]
				out = append(out, segment{m.pieces[id].piece, id})
			}
		}
		return out
	}
	out := segs[:0]
	prevUnk := false
	for _, s := range segs {
		isUnk := m.pieces[s.id].typ == typeUnknown
		if isUnk && prevUnk {
			out[len(out)-1].piece += s.piece
		} else {
			out = append(out, s)
		}
		prevUnk = isUnk
	}
	return out
}

// segment splits normalized text into pieces with the model's algorithm.
func (m *Model) segment(normalized string) []segment {
	if normalized == "" {
		return nil
	}
	if m.kind == modelUnigram {
		return m.segmentUnigram(normalized)
	}
	return m.segmentBPE(normalized)
}

// Decode turns ids back into text like SentencePieceProcessor.decode:
// control pieces vanish, <unk> becomes the model's unknown surface (" ⁇ "
// by default), runs of byte pieces are reassembled into UTF-8 (each invalid
// byte becomes U+FFFD), U+2581 becomes a space and the leading space that
// add_dummy_prefix introduced is dropped. An id outside [0, VocabSize()) is
// an error.
func (m *Model) Decode(ids []int) (string, error) {
	var text strings.Builder
	var pending []byte // bytes of a run of byte pieces
	flush := func() {
		for len(pending) > 0 {
			r, size := utf8.DecodeRune(pending)
			if r == utf8.RuneError && size == 1 {
				text.WriteString("\uFFFD")
			} else {
				text.Write(pending[:size])
			}
			pending = pending[size:]
		}
		pending = pending[:0]
	}
	isBosWS, bosWSSeen := true, false
	for _, raw := range ids {
		if raw < 0 || raw >= len(m.pieces) {
			return "", fmt.Errorf("decode: invalid id %d (vocabulary has %d pieces)", raw, len(m.pieces))
		}
		piece := m.pieces[raw].piece
		id := m.pieceToID(piece) // the C++ decoder goes through the piece too
		if m.pieces[id].typ == typeByte {
			pending = append(pending, byte(pieceToByte(piece)))
			continue
		}
		flush()
		if bosWSSeen || text.Len() > 0 {
			isBosWS = false
		}
		var s string
		s, bosWSSeen = m.decodePiece(piece, id, isBosWS)
		text.WriteString(s)
	}
	flush()
	if m.denorm != nil {
		return m.denorm.normalize(text.String()), nil
	}
	return text.String(), nil
}

// decodePiece is the surface of one non-byte piece. It reports whether it
// consumed the dummy-prefix space at the start of the text.
func (m *Model) decodePiece(piece string, id int32, isBosWS bool) (string, bool) {
	switch m.pieces[id].typ {
	case typeControl:
		return "", false
	case typeUnknown:
		if m.pieces[id].piece == piece {
			return m.unkSurface, false
		}
		return piece, false
	}
	consumed := false
	if isBosWS && (m.norm.addDummyPrefix || m.norm.removeExtraWhitespaces) {
		if rest, ok := strings.CutPrefix(piece, spaceSymbol); ok {
			piece, consumed = rest, true
		}
		if m.norm.removeExtraWhitespaces {
			consumed = false
		}
	}
	return strings.ReplaceAll(piece, spaceSymbol, " "), consumed
}
