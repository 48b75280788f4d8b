package server

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzSpeechRequest feeds arbitrary bodies through the decoder (strict and
// lenient) and the validator: never a panic, and every rejection is a 4xx
// API error.
func FuzzSpeechRequest(f *testing.F) {
	for _, s := range []string{
		`{"input":"hi","voice":"bob"}`,
		`{"input":"hi","voice":{"ref_audio":"UklGRg==","ref_text":"x"},"stream":true,"stream_format":"sse","seed":1,"top_k":3}`,
		`{"input":"hi","voice":{"id":"bob"},"speed":1.0,"language":"auto","streaming_interval":0.08}`,
		`{"input":null}`, `[]`, `{"voice":{"ref_audio":1}}`, `{"input":"a"} x`, `{"seed":-1}`, `{"input":"\u0000"}`,
		`{"voice":{"ref_audio":"data:audio/wav;base64,QUJD"}}`, `{"max_new_frames":1e99}`,
		`{"input":"hi","voice":"alloy","response_format":"mp3","speed":1.25,"backend":"x","user":"u","instructions":"calm"}`,
		`{"input":"hi","voice":"a","seed":5,"seed":7}`, `{"input":"hi","voice":{"id":"a","id":"b"}}`,
		`{"input":"hi","voice":"a","sample_rate":24000,"response_format":"pcm","bitrate":64000}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	lim := Limits{MaxInputChars: 100, MaxBodyBytes: 1 << 20, MaxNewFrames: 375}
	pol := policy{Limits: lim, modelOK: func(string) bool { return true }, sampleRate: 48000, modelRate: 48000}
	f.Fuzz(func(t *testing.T, b []byte, strict bool) {
		b = bytes.Clone(b) // validate decodes the clip in place
		var req, ref speechRequest
		_, err := decodeObject(b, &req, strict)
		// The copy-free decoder agrees with the streaming one it replaced.
		_, rerr := decodeObjectStream(bytes.NewReader(b), &ref, strict)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("decodeObject: %v; decodeObjectStream: %v", err, rerr)
		}
		if err == nil && !reflect.DeepEqual(req, ref) {
			t.Fatalf("decodeObject and decodeObjectStream disagree:\n%+v\n%+v", req, ref)
		}
		if err != nil {
			if ae, ok := err.(*apiError); !ok || ae.Status < 400 || ae.Status >= 500 {
				t.Fatalf("decode error %T %v is not a 4xx API error", err, err)
			}
			return
		}
		v, err := req.validate(pol)
		if err != nil {
			if ae, ok := err.(*apiError); !ok || ae.Status < 400 || ae.Status >= 500 {
				t.Fatalf("validation error %T %v is not a 4xx API error", err, err)
			}
			return
		}
		if v.input == "" || (v.voiceName == "" && len(v.refAudio) == 0) || v.firstFrames < 1 || v.chunkFrames < 1 ||
			v.sampleRate < 8000 || v.sampleRate > 48000 || !(v.speed >= 0.25 && v.speed <= 4) {
			t.Fatalf("accepted an unusable request: %+v", v)
		}
	})
}
