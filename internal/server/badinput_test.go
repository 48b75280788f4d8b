package server

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/nanovox/nanovox/internal/audio"
)

// wavB64 returns a base64 PCM16 WAV of a sine: rate, channels, seconds.
func wavB64(rate, channels int, seconds float64) string {
	n := int(float64(rate) * seconds)
	samples := make([]float32, 0, n*channels)
	for i := range n {
		v := float32(0.3 * math.Sin(float64(i)*0.05))
		for range channels {
			samples = append(samples, v)
		}
	}
	return base64.StdEncoding.EncodeToString(audio.EncodeWAV(samples, rate, channels))
}

// floatWAVB64 is a float32 WAV whose samples may be NaN.
func floatWAVB64(vals []float32) string {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+4*len(vals)))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, uint32(16))
	binary.Write(&b, le, uint16(3))
	binary.Write(&b, le, uint16(1))
	binary.Write(&b, le, uint32(16000))
	binary.Write(&b, le, uint32(16000*4))
	binary.Write(&b, le, uint16(4))
	binary.Write(&b, le, uint16(32))
	b.WriteString("data")
	binary.Write(&b, le, uint32(4*len(vals)))
	binary.Write(&b, le, vals)
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestSpeechBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{cfg: Config{Limits: Limits{MaxInputChars: 200, MaxBodyBytes: 512 << 10, MaxNewFrames: 100}}})
	nan := make([]float32, 16000)
	nan[500] = float32(math.NaN())
	raw := func(s string) []byte { return []byte(s) }
	tests := []struct {
		name   string
		body   []byte
		ctype  string
		status int
		param  string
	}{
		{"empty body", raw(""), "", 400, ""},
		{"malformed json", raw(`{"input": "hi",`), "", 400, ""},
		{"not an object", raw(`[1,2,3]`), "", 400, ""},
		{"json string", raw(`"hello"`), "", 400, ""},
		{"trailing data", raw(`{"input":"hi","voice":"v"} {"x":1}`), "", 400, ""},
		{"garbage", raw("\x00\x01\x02binary"), "", 400, ""},
		{"duplicate seed", raw(`{"input":"hi","voice":"v","seed":5,"seed":7}`), "", 400, "seed"},
		{"duplicate voice", raw(`{"input":"hi","voice":"a","voice":"b"}`), "", 400, "voice"},
		{"duplicate voice id", raw(`{"input":"hi","voice":{"id":"a","id":"b"}}`), "", 400, "voice.id"},
		{"unknown voice key", body(map[string]any{"voice": map[string]any{"ref_audio": refB64, "speaker": "x"}}), "", 400, "voice.speaker"},
		{"input missing", body(map[string]any{"input": nil}), "", 400, "input"},
		{"input number", body(map[string]any{"input": 42}), "", 400, "input"},
		{"input null", raw(`{"input": null, "voice": "x"}`), "", 400, "input"},
		{"input empty", body(map[string]any{"input": ""}), "", 400, "input"},
		{"input blank", body(map[string]any{"input": " \n\t "}), "", 400, "input"},
		{"input too long", body(map[string]any{"input": strings.Repeat("a", 201)}), "", 400, "input"},
		{"voice missing", body(map[string]any{"voice": nil}), "", 400, "voice"},
		{"voice number", body(map[string]any{"voice": 3}), "", 400, "voice"},
		{"voice array", body(map[string]any{"voice": []int{1}}), "", 400, "voice"},
		{"voice empty name", body(map[string]any{"voice": ""}), "", 400, "voice"},
		{"unknown saved voice", body(map[string]any{"voice": "alloy"}), "", 404, "voice"},
		{"ref_audio missing", body(map[string]any{"voice": map[string]any{"ref_text": "hi"}}), "", 400, "voice.ref_audio"},
		{"ref_audio number", body(map[string]any{"voice": map[string]any{"ref_audio": 5}}), "", 400, "voice.ref_audio"},
		{"ref_audio bad base64", body(map[string]any{"voice": map[string]any{"ref_audio": "!!!not base64***"}}), "", 400, "voice.ref_audio"},
		{"ref_audio empty", body(map[string]any{"voice": map[string]any{"ref_audio": ""}}), "", 400, "voice.ref_audio"},
		{"ref_audio not audio", body(map[string]any{"voice": map[string]any{"ref_audio": base64.StdEncoding.EncodeToString([]byte("hello, I am plain text and not a sound"))}}), "", 400, "voice.ref_audio"},
		{"ref_audio too short", body(map[string]any{"voice": map[string]any{"ref_audio": wavB64(16000, 1, 0.3)}}), "", 400, "voice.ref_audio"},
		{"ref_audio too long", body(map[string]any{"voice": map[string]any{"ref_audio": wavB64(4000, 1, 31)}}), "", 400, "voice.ref_audio"},
		{"ref_audio 3 channels", body(map[string]any{"voice": map[string]any{"ref_audio": wavB64(8000, 3, 1)}}), "", 400, "voice.ref_audio"},
		{"ref_audio NaN samples", body(map[string]any{"voice": map[string]any{"ref_audio": floatWAVB64(nan)}}), "", 400, "voice.ref_audio"},
		{"ref_audio truncated header", body(map[string]any{"voice": map[string]any{"ref_audio": base64.StdEncoding.EncodeToString([]byte("RIFF\x10\x00\x00\x00WAVEfmt "))}}), "", 400, "voice.ref_audio"},
		{"ref_text wrong type", body(map[string]any{"voice": map[string]any{"ref_audio": refB64, "ref_text": 1}}), "", 400, "voice.ref_text"},
		{"response_format ogg", body(map[string]any{"response_format": "ogg"}), "", 400, "response_format"},
		{"response_format empty", body(map[string]any{"response_format": ""}), "", 400, "response_format"},
		{"sample_rate too low", body(map[string]any{"sample_rate": 7999}), "", 400, "sample_rate"},
		{"sample_rate too high", body(map[string]any{"sample_rate": 96000}), "", 400, "sample_rate"},
		{"sample_rate float", body(map[string]any{"sample_rate": 24000.5}), "", 400, "sample_rate"},
		{"bitrate for wav", body(map[string]any{"bitrate": 64000}), "", 400, "bitrate"},
		{"bitrate too low for mp3", body(map[string]any{"response_format": "mp3", "bitrate": 1000}), "", 400, "bitrate"},
		{"bitrate too low for mp3 at 48 kHz", body(map[string]any{"response_format": "mp3", "bitrate": 16000}), "", 400, "bitrate"},
		{"bitrate too high for aac", body(map[string]any{"response_format": "aac", "bitrate": 400000}), "", 400, "bitrate"},
		{"bitrate too high for opus", body(map[string]any{"response_format": "opus", "bitrate": 600000}), "", 400, "bitrate"},
		{"response_format number", body(map[string]any{"response_format": 1}), "", 400, "response_format"},
		{"stream string", body(map[string]any{"stream": "yes"}), "", 400, "stream"},
		{"stream_format bad", body(map[string]any{"stream_format": "websocket"}), "", 400, "stream_format"},
		{"sse with stream false", body(map[string]any{"stream_format": "sse", "stream": false}), "", 400, "stream"},
		{"interval zero", body(map[string]any{"stream": true, "streaming_interval": 0}), "", 400, "streaming_interval"},
		{"interval too big", body(map[string]any{"stream": true, "streaming_interval": 10.5}), "", 400, "streaming_interval"},
		{"interval negative", body(map[string]any{"stream": true, "streaming_interval": -1}), "", 400, "streaming_interval"},
		{"initial interval zero", body(map[string]any{"streaming_initial_interval": 0}), "", 400, "streaming_initial_interval"},
		{"interval string", body(map[string]any{"streaming_interval": "fast"}), "", 400, "streaming_interval"},
		{"speed above 4", body(map[string]any{"speed": 4.5}), "", 400, "speed"},
		{"speed below 0.25", body(map[string]any{"speed": 0.2}), "", 400, "speed"},
		{"speed zero", body(map[string]any{"speed": 0}), "", 400, "speed"},
		{"speed string", body(map[string]any{"speed": "1"}), "", 400, "speed"},
		{"instructions number", body(map[string]any{"instructions": 1}), "", 400, "instructions"},
		{"language en", body(map[string]any{"language": "en"}), "", 400, "language"},
		{"language number", body(map[string]any{"language": 1}), "", 400, "language"},
		{"seed negative", body(map[string]any{"seed": -1}), "", 400, "seed"},
		{"seed float", body(map[string]any{"seed": 1.5}), "", 400, "seed"},
		{"seed string", body(map[string]any{"seed": "1"}), "", 400, "seed"},
		{"temperature zero", body(map[string]any{"temperature": 0}), "", 400, "temperature"},
		{"temperature huge", body(map[string]any{"temperature": 1e9}), "", 400, "temperature"},
		{"top_p zero", body(map[string]any{"top_p": 0}), "", 400, "top_p"},
		{"top_p above one", body(map[string]any{"top_p": 1.01}), "", 400, "top_p"},
		{"top_k negative", body(map[string]any{"top_k": -1}), "", 400, "top_k"},
		{"top_k float", body(map[string]any{"top_k": 2.5}), "", 400, "top_k"},
		{"repetition penalty zero", body(map[string]any{"repetition_penalty": 0}), "", 400, "repetition_penalty"},
		{"max_new_frames zero", body(map[string]any{"max_new_frames": 0}), "", 400, "max_new_frames"},
		{"max_new_frames over limit", body(map[string]any{"max_new_frames": 101}), "", 400, "max_new_frames"},
		{"unknown model", body(map[string]any{"model": "whisper-1"}), "", 404, "model"},
		{"model number", body(map[string]any{"model": 1}), "", 400, "model"},
		{"huge body", body(map[string]any{"input": strings.Repeat("x", 600<<10)}), "", 413, ""},
		{"huge ref audio", body(map[string]any{"voice": map[string]any{"ref_audio": strings.Repeat("A", 600<<10)}}), "", 413, ""},
		{"xml content type", body(nil), "application/xml", 415, ""},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{}
			if tc.ctype != "" {
				hdr = []string{"Content-Type", tc.ctype}
			}
			resp := ts.post(t, "/v1/audio/speech", tc.body, hdr...)
			b := readAll(t, resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("error content type %q", ct)
			}
			e := decodeErr(t, b)
			gotParam := ""
			if e.Error.Param != nil {
				gotParam = *e.Error.Param
			}
			if gotParam != tc.param {
				t.Fatalf("param %q, want %q (%s)", gotParam, tc.param, e.Error.Message)
			}
			if e.Error.Type == "" || e.Error.Code == nil {
				t.Fatalf("error lacks type/code: %s", b)
			}
		})
	}
	// No bad request took a slot or left one taken, and the server still serves.
	if a, q := ts.eng.Active(); a != 0 || q != 0 {
		t.Fatalf("after bad requests: %d active, %d queued", a, q)
	}
	resp := ts.post(t, "/v1/audio/speech", body(map[string]any{"response_format": "pcm", "seed": 1}))
	if b := readAll(t, resp); resp.StatusCode != 200 || len(b) == 0 {
		t.Fatalf("server does not serve after bad input: %d %s", resp.StatusCode, b)
	}
}

func TestMethodsPathsAuth(t *testing.T) {
	ts := newTestServer(t, serverOpts{cfg: Config{APIKey: "s3cret"}})
	do := func(method, path string, hdr ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, readAll(t, resp)
	}
	tests := []struct {
		method, path string
		hdr          []string
		status       int
	}{
		{"GET", "/healthz", nil, 200},
		{"GET", "/readyz", nil, 200},
		{"GET", "/metrics", nil, 200},
		{"GET", "/", nil, 200},
		{"GET", "/v1/models", nil, 401},
		{"GET", "/v1/models", []string{"Authorization", "Bearer wrong"}, 401},
		{"GET", "/v1/models", []string{"Authorization", "Bearer s3cret"}, 200},
		{"GET", "/v1/models", []string{"Authorization", "bearer s3cret"}, 200},
		{"GET", "/v1/models", []string{"x-api-key", "s3cret"}, 200},
		{"GET", "/v1/models", []string{"x-api-key", "s3cre"}, 401},
		{"GET", "/v1/models/tiny-a", []string{"x-api-key", "s3cret"}, 200},
		{"GET", "/v1/models/tts-1", []string{"x-api-key", "s3cret"}, 200},
		{"GET", "/v1/models/nope", []string{"x-api-key", "s3cret"}, 404},
		{"POST", "/v1/audio/speech", nil, 401},
		{"GET", "/v1/audio/speech", []string{"x-api-key", "s3cret"}, 405},
		{"PUT", "/v1/models", nil, 405},
		{"GET", "/v2/nothing", nil, 404},
		{"GET", "/v1/audio/voices", nil, 401},
		{"GET", "/v1/audio/voices", []string{"x-api-key", "s3cret"}, 200},
	}
	for _, tc := range tests {
		resp, b := do(tc.method, tc.path, tc.hdr...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s %v: %d, want %d (%s)", tc.method, tc.path, tc.hdr, resp.StatusCode, tc.status, b)
			continue
		}
		if tc.status >= 400 {
			decodeErr(t, b)
		}
		if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", tc.method, tc.path)
		}
		if tc.status == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tc.method, tc.path)
		}
	}
	_, page := do("GET", "/")
	if !bytes.Contains(page, []byte("/v1/audio/speech")) {
		t.Error("web page does not call the API")
	}
	_, m := do("GET", "/metrics")
	for _, name := range []string{"nanovox_http_requests_total", "nanovox_active_streams", "nanovox_queue_depth", "nanovox_time_to_first_audio_seconds", "nanovox_real_time_factor", "nanovox_frames_generated_total", "nanovox_stream_limit 4"} {
		if !bytes.Contains(m, []byte(name)) {
			t.Errorf("metrics lack %s", name)
		}
	}
}
