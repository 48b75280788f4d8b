package spm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// This file reads the protobuf wire format of sentencepiece_model.proto
// (proto2). Only the fields the encoder and decoder need are decoded; every
// other field is skipped the way protobuf skips unknown fields. Where the
// C++ parser is lenient (a known field with an unexpected wire type is kept
// as an unknown field, an out-of-range enum value leaves the field unset),
// this reader is lenient in the same way.

// Wire types.
const (
	wireVarint     = 0
	wireFixed64    = 1
	wireBytes      = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireFixed32    = 5
)

// maxGroupDepth bounds the recursion when skipping nested groups, like
// protobuf's default recursion limit.
const maxGroupDepth = 100

var errTruncated = errors.New("truncated message")

// wireReader walks the fields of one serialized message.
type wireReader struct {
	b   []byte
	off int
}

func (r *wireReader) done() bool { return r.off >= len(r.b) }

func (r *wireReader) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.off >= len(r.b) {
			return 0, errTruncated
		}
		c := r.b[r.off]
		r.off++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint overflows 64 bits")
}

// key reads a field key and returns the field number and wire type.
func (r *wireReader) key() (field uint32, wire int, err error) {
	k, err := r.varint()
	if err != nil {
		return 0, 0, err
	}
	if k>>3 == 0 || k > math.MaxUint32 {
		return 0, 0, fmt.Errorf("invalid field number %d", k>>3)
	}
	return uint32(k >> 3), int(k & 7), nil
}

func (r *wireReader) bytes() ([]byte, error) {
	n, err := r.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

func (r *wireReader) fixed32() (uint32, error) {
	if len(r.b)-r.off < 4 {
		return 0, errTruncated
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

// skip consumes the value of a field with the given wire type.
func (r *wireReader) skip(field uint32, wire int, depth int) error {
	switch wire {
	case wireVarint:
		_, err := r.varint()
		return err
	case wireFixed64:
		if len(r.b)-r.off < 8 {
			return errTruncated
		}
		r.off += 8
		return nil
	case wireBytes:
		_, err := r.bytes()
		return err
	case wireFixed32:
		_, err := r.fixed32()
		return err
	case wireStartGroup:
		if depth >= maxGroupDepth {
			return errors.New("groups nested too deeply")
		}
		for {
			f, w, err := r.key()
			if err != nil {
				return err
			}
			if w == wireEndGroup {
				if f != field {
					return fmt.Errorf("group %d closed by end-group %d", field, f)
				}
				return nil
			}
			if err := r.skip(f, w, depth+1); err != nil {
				return err
			}
		}
	case wireEndGroup:
		return fmt.Errorf("unexpected end-group %d", field)
	default:
		return fmt.Errorf("invalid wire type %d", wire)
	}
}

// fields calls fn for each field of the message in b. fn returns handled =
// false when it does not know the field (or its wire type), and the value
// is then skipped.
func fields(b []byte, fn func(r *wireReader, field uint32, wire int) (handled bool, err error)) error {
	r := &wireReader{b: b}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		handled, err := fn(r, field, wire)
		if err != nil {
			return fmt.Errorf("field %d: %w", field, err)
		}
		if !handled {
			if err := r.skip(field, wire, 0); err != nil {
				return fmt.Errorf("field %d: %w", field, err)
			}
		}
	}
	return nil
}

// Piece types of ModelProto.SentencePiece.Type.
const (
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// Model types of TrainerSpec.ModelType.
const (
	modelUnigram = 1
	modelBPE     = 2
	modelWord    = 3
	modelChar    = 4
)

type protoPiece struct {
	piece string
	score float32
	typ   int32
}

type protoTrainerSpec struct {
	modelType               int32
	treatWhitespaceAsSuffix bool
	byteFallback            bool
	unkSurface              string
	hasUnkSurface           bool
}

type protoNormalizerSpec struct {
	precompiledCharsmap    []byte
	addDummyPrefix         bool
	removeExtraWhitespaces bool
	escapeWhitespaces      bool
}

type protoSample struct {
	input, expected string
}

type protoModel struct {
	pieces       []protoPiece
	trainer      protoTrainerSpec
	normalizer   protoNormalizerSpec
	hasDenorm    bool
	denormalizer protoNormalizerSpec
	selfTest     []protoSample
}

func defaultNormalizerSpec() protoNormalizerSpec {
	return protoNormalizerSpec{addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true}
}

// parseModelProto decodes a serialized sentencepiece.ModelProto.
func parseModelProto(b []byte) (*protoModel, error) {
	m := &protoModel{
		trainer:      protoTrainerSpec{modelType: modelUnigram},
		normalizer:   defaultNormalizerSpec(),
		denormalizer: defaultNormalizerSpec(),
	}
	err := fields(b, func(r *wireReader, field uint32, wire int) (bool, error) {
		if wire != wireBytes || field > 5 {
			return false, nil
		}
		v, err := r.bytes()
		if err != nil {
			return true, err
		}
		switch field {
		case 1:
			p := protoPiece{typ: typeNormal}
			if err := parsePiece(v, &p); err != nil {
				return true, fmt.Errorf("piece %d: %w", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, p)
		case 2:
			return true, parseTrainerSpec(v, &m.trainer)
		case 3:
			return true, parseNormalizerSpec(v, &m.normalizer)
		case 4:
			return true, parseSelfTest(v, &m.selfTest)
		case 5:
			m.hasDenorm = true
			return true, parseNormalizerSpec(v, &m.denormalizer)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func parsePiece(b []byte, p *protoPiece) error {
	return fields(b, func(r *wireReader, field uint32, wire int) (bool, error) {
		switch {
		case field == 1 && wire == wireBytes:
			v, err := r.bytes()
			p.piece = string(v)
			return true, err
		case field == 2 && wire == wireFixed32:
			v, err := r.fixed32()
			p.score = math.Float32frombits(v)
			return true, err
		case field == 3 && wire == wireVarint:
			v, err := r.varint()
			// proto2 enums are closed: an unknown value leaves the field as it was.
			if t := int32(v); t >= typeNormal && t <= typeByte {
				p.typ = t
			}
			return true, err
		}
		return false, nil
	})
}

func parseTrainerSpec(b []byte, t *protoTrainerSpec) error {
	return fields(b, func(r *wireReader, field uint32, wire int) (bool, error) {
		switch {
		case field == 3 && wire == wireVarint:
			v, err := r.varint()
			if mt := int32(v); mt >= modelUnigram && mt <= modelChar {
				t.modelType = mt
			}
			return true, err
		case field == 24 && wire == wireVarint:
			v, err := r.varint()
			t.treatWhitespaceAsSuffix = v != 0
			return true, err
		case field == 35 && wire == wireVarint:
			v, err := r.varint()
			t.byteFallback = v != 0
			return true, err
		case field == 44 && wire == wireBytes:
			v, err := r.bytes()
			t.unkSurface = string(v)
			t.hasUnkSurface = true
			return true, err
		}
		return false, nil
	})
}

func parseNormalizerSpec(b []byte, n *protoNormalizerSpec) error {
	return fields(b, func(r *wireReader, field uint32, wire int) (bool, error) {
		switch {
		case field == 2 && wire == wireBytes:
			v, err := r.bytes()
			n.precompiledCharsmap = append([]byte(nil), v...)
			return true, err
		case field >= 3 && field <= 5 && wire == wireVarint:
			v, err := r.varint()
			switch field {
			case 3:
				n.addDummyPrefix = v != 0
			case 4:
				n.removeExtraWhitespaces = v != 0
			case 5:
				n.escapeWhitespaces = v != 0
			}
			return true, err
		}
		return false, nil
	})
}

func parseSelfTest(b []byte, samples *[]protoSample) error {
	return fields(b, func(r *wireReader, field uint32, wire int) (bool, error) {
		if field != 1 || wire != wireBytes {
			return false, nil
		}
		v, err := r.bytes()
		if err != nil {
			return true, err
		}
		var s protoSample
		err = fields(v, func(r *wireReader, field uint32, wire int) (bool, error) {
			if (field != 1 && field != 2) || wire != wireBytes {
				return false, nil
			}
			v, err := r.bytes()
			if field == 1 {
				s.input = string(v)
			} else {
				s.expected = string(v)
			}
			return true, err
		})
		*samples = append(*samples, s)
		return true, err
	})
}
