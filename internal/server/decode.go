package server

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
)

// jsonFields returns the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

var (
	speechFields = jsonFields(reflect.TypeFor[speechRequest]())
	voiceFields  = jsonFields(reflect.TypeFor[inlineVoice]())
)

// decodeObject decodes exactly one JSON object from r into v (a pointer to
// a struct): a key that appears twice is a 400 naming it (which of two
// values wins is not something a client should have to guess); keys that v
// does not have are rejected with 400 unknown_parameter when strict, else
// skipped and returned, in the order they came. Trailing data after the
// object is rejected. Type errors name the parameter (jsonError).
func decodeObject(r io.Reader, v any, known []string, strict bool) (ignored []string, err error) {
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
		if !slices.Contains(known, key) {
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
