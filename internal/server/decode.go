package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
)

// rawJSONTaker is implemented by field types that keep their value's JSON
// text as it lies in the request body instead of a decoded copy: the inline
// clip, which is most of a large body and is base64-decoded in place.
// takeJSON gets valid JSON (not null) and may keep b.
type rawJSONTaker interface {
	takeJSON(b []byte) error
}

var rawJSONTakerType = reflect.TypeFor[rawJSONTaker]()

// decodeObject decodes exactly one JSON object from data into v (a pointer
// to a struct): a key that appears twice is a 400 naming it (which of two
// values wins is not something a client should have to guess); keys that no
// field of v is tagged with are rejected with 400 unknown_parameter when strict, else
// skipped and returned, in the order they came. Trailing data after the
// object is rejected. Type errors name the parameter (jsonError).
//
// It copies nothing large: the body is checked once (json.Valid, which
// allocates nothing), each known key's value is decoded from its slice of
// data, and fields that implement rawJSONTaker keep their slice. A body
// that is not valid JSON goes through decodeObjectStream, which finds the
// first problem the way a streaming decoder meets it.
func decodeObject(data []byte, v any, strict bool) (ignored []string, err error) {
	if !json.Valid(data) {
		if _, err := decodeObjectStream(bytes.NewReader(data), v, strict); err != nil {
			return nil, err
		}
		return nil, badRequest("", "invalid_json", "request body is not valid JSON")
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, badRequest("", "invalid_type", "the request body must be a JSON object")
	}
	rv := reflect.ValueOf(v).Elem()
	fields := fieldIndex(rv.Type())
	seen := map[string]bool{}
	i = skipSpace(data, i+1)
	for data[i] != '}' {
		kEnd := skipValue(data, i)
		var key string
		if err := json.Unmarshal(data[i:kEnd], &key); err != nil {
			return nil, jsonError(err)
		}
		i = skipSpace(data, kEnd)
		i = skipSpace(data, i+1) // the colon
		vEnd := skipValue(data, i)
		raw := data[i:vEnd]
		i = skipSpace(data, vEnd)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
		if seen[key] {
			return nil, badRequest(key, "duplicate_parameter", "parameter %q appears more than once", key)
		}
		seen[key] = true
		fi, ok := fields[key]
		if !ok {
			if strict {
				return nil, badRequest(key, "unknown_parameter", "unknown parameter %q", key)
			}
			ignored = append(ignored, key)
			continue
		}
		if err := decodeField(rv.Field(fi), raw, key); err != nil {
			return nil, err
		}
	}
	return ignored, nil
}

// decodeField decodes raw into f, a pointer field, as encoding/json would
// (null leaves it nil), naming key in type errors.
func decodeField(f reflect.Value, raw []byte, key string) error {
	if f.Kind() == reflect.Pointer && reflect.PointerTo(f.Type().Elem()).Implements(rawJSONTakerType) {
		if string(raw) == "null" {
			f.SetZero()
			return nil
		}
		p := reflect.New(f.Type().Elem())
		if err := p.Interface().(rawJSONTaker).takeJSON(raw); err != nil {
			return jsonError(fieldTypeError(err, key))
		}
		f.Set(p)
		return nil
	}
	if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
		return jsonError(fieldTypeError(err, key))
	}
	return nil
}

// fieldTypeError puts the key into a type error about one field's value,
// as decoding the whole object would have named it.
func fieldTypeError(err error, key string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		c := *te
		if c.Field == "" {
			c.Field = key
		} else {
			c.Field = key + "." + c.Field
		}
		return &c
	}
	return err
}

// fieldIndex maps a struct's JSON names to field indexes, built once per
// type.
func fieldIndex(t reflect.Type) map[string]int {
	if m, ok := fieldIndexes.Load(t); ok {
		return m.(map[string]int)
	}
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	fieldIndexes.Store(t, m)
	return m
}

var fieldIndexes sync.Map // reflect.Type → map[string]int

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]. b must be
// valid JSON (json.Valid), so only strings need care: brackets inside them
// do not count.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			i++
			for b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 { // the end of the enclosing object
				return i
			}
		case ',', ' ', '\n', '\r', '\t', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// decodeObjectStream is decodeObject over a stream with encoding/json's
// tokenizer. It keeps copies of the values, so it is used only to report
// the first problem of a body that is not valid JSON, exactly where a
// streaming decoder finds it (a duplicate key before a later syntax error
// is still reported as the duplicate).
func decodeObjectStream(r io.Reader, v any, strict bool) (ignored []string, err error) {
	fields := fieldIndex(reflect.TypeOf(v).Elem())
	dec := json.NewDecoder(r)
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, badRequest("", "invalid_type", "the request body must be a JSON object")
	}
	var kept bytes.Buffer
	kept.WriteByte('{')
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		key := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(err)
		}
		if seen[key] {
			return nil, badRequest(key, "duplicate_parameter", "parameter %q appears more than once", key)
		}
		seen[key] = true
		if _, ok := fields[key]; !ok {
			if strict {
				return nil, badRequest(key, "unknown_parameter", "unknown parameter %q", key)
			}
			ignored = append(ignored, key)
			continue
		}
		if kept.Len() > 1 {
			kept.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		kept.Write(k)
		kept.WriteByte(':')
		kept.Write(raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("", "invalid_json", "request body has data after the JSON object")
	}
	kept.WriteByte('}')
	if err := json.Unmarshal(kept.Bytes(), v); err != nil {
		return nil, jsonError(err)
	}
	return ignored, nil
}
