// Package server is nanovox's HTTP API: OpenAI-compatible speech synthesis
// (buffered, streamed raw PCM and SSE), saved voices, models, health,
// readiness, Prometheus metrics and a small web page. It talks only to the
// engine, never to a model family directly.
package server

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nanovox/nanovox/internal/audio/encode"
	"github.com/nanovox/nanovox/internal/engine"
)

// Config configures a Server.
type Config struct {
	// APIKey, if set, is required as "Authorization: Bearer KEY" or
	// "x-api-key: KEY" on /v1/ endpoints.
	APIKey string
	// ModelID is the id GET /v1/models reports and requests may name;
	// Aliases are other accepted names.
	ModelID string
	Aliases []string
	Limits  Limits
	// IdleWriteTimeout cuts off a client that stops reading a stream.
	IdleWriteTimeout time.Duration
	// MaxRefAudioBytes bounds a decoded reference clip.
	MaxRefAudioBytes int
	Logger           *slog.Logger
	// Voices is the saved-voice store (nil: saved voices are unavailable).
	Voices Voices
	// VoiceModel identifies the codec voices are encoded with; voices saved
	// for another codec are rejected.
	VoiceModel string
	// DefaultFormat is the response_format of requests that name none
	// (OpenAI's default is mp3).
	DefaultFormat encode.Format
	// SampleRate is the output sample rate of requests that ask for none
	// (0: the model's, 48 kHz).
	SampleRate int
	// StrictParams rejects unknown request parameters with 400 instead of
	// ignoring them (and listing them in X-Ignored-Parameters).
	StrictParams bool
	// VoiceAliases maps voice names clients send (OpenAI's alloy, nova, …)
	// to saved voices.
	VoiceAliases map[string]string
	// DefaultVoice is the saved voice of requests that send no voice, or an
	// OpenAI voice name without an alias.
	DefaultVoice string
	// BodyMemoryBytes bounds the request bodies read and held before
	// admission (admit.go); 0: 128 MiB, at least Limits.MaxBodyBytes.
	BodyMemoryBytes int64
	// ClipDecodes bounds the inline clips decoded and held before the
	// engine has encoded them; 0: 2.
	ClipDecodes int
	// BodyTimeout bounds the time to receive a request body once the
	// handler reads it; 0: 60 s, negative: none.
	BodyTimeout time.Duration
	// PublicLists serves the model and voice lists without the API key
	// (Open WebUI fetches them without one).
	PublicLists bool
}

// Server serves the HTTP API over an engine.
type Server struct {
	cfg      Config
	eng      *engine.Engine
	log      *slog.Logger
	metrics  *Metrics
	mux      *http.ServeMux
	draining atomic.Bool
	// bodies and clips are the gates before admission (admit.go).
	bodies, clips *budget
}

// DefaultAliases are model names OpenAI clients commonly send.
var DefaultAliases = []string{"tts-1", "tts-1-hd", "gpt-4o-mini-tts", "moss-tts-nano"}

// New returns a server over eng. metrics may be nil (a fresh registry is made).
func New(eng *engine.Engine, cfg Config, metrics *Metrics) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits.MaxInputChars <= 0 {
		cfg.Limits.MaxInputChars = 4096
	}
	if cfg.Limits.MaxBodyBytes <= 0 {
		cfg.Limits.MaxBodyBytes = 32 << 20
	}
	if cfg.Limits.MaxNewFrames <= 0 {
		cfg.Limits.MaxNewFrames = eng.Family().DefaultParams().MaxFrames
	}
	if cfg.IdleWriteTimeout <= 0 {
		cfg.IdleWriteTimeout = 30 * time.Second
	}
	if cfg.BodyMemoryBytes <= 0 {
		cfg.BodyMemoryBytes = max(128<<20, cfg.Limits.MaxBodyBytes)
	}
	if cfg.ClipDecodes <= 0 {
		cfg.ClipDecodes = 2
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = 60 * time.Second
	}
	if metrics == nil {
		metrics = NewMetrics()
	}
	s := &Server{cfg: cfg, eng: eng, log: cfg.Logger, metrics: metrics, mux: http.NewServeMux()}
	s.bodies = newBudget(cfg.BodyMemoryBytes, func(used int64, waiting int) {
		metrics.bodyMem.Set(float64(used))
		metrics.bodyWaiting.Set(float64(waiting))
	})
	s.clips = newBudget(int64(cfg.ClipDecodes), func(used int64, waiting int) {
		metrics.clipDecodes.Set(float64(used))
		metrics.clipWaiting.Set(float64(waiting))
	})
	s.routes()
	return s
}

// Metrics returns the server's metrics (also the engine observer).
func (s *Server) Metrics() *Metrics { return s.metrics }

// SetDraining makes /readyz fail and new speech requests get 503 while the
// process shuts down.
func (s *Server) SetDraining() { s.draining.Store(true) }

func (s *Server) routes() {
	s.mux.HandleFunc("POST /v1/audio/speech", s.auth(s.handleSpeech))
	list := s.auth
	if s.cfg.PublicLists {
		list = func(h http.HandlerFunc) http.HandlerFunc { return h }
	}
	s.mux.HandleFunc("GET /v1/models", list(s.handleModels))
	s.mux.HandleFunc("GET /v1/models/{id...}", list(s.handleModel))
	s.mux.HandleFunc("GET /v1/audio/models", list(s.handleAudioModels))
	s.mux.HandleFunc("GET /v1/audio/voices", list(s.handleVoiceList))
	s.mux.HandleFunc("POST /v1/audio/voices", s.auth(s.handleVoiceAdd))
	s.mux.HandleFunc("GET /v1/audio/voices/{name}", s.auth(s.handleVoiceGet))
	s.mux.HandleFunc("DELETE /v1/audio/voices/{name}", s.auth(s.handleVoiceDelete))
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.Handle("GET /metrics", s.metrics.Handler())
	s.mux.HandleFunc("GET /{$}", s.handleIndex)
}

// Handler returns the HTTP handler: routing, panic recovery, request metrics.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		s.limitBodyTime(w, r)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					s.metrics.request(routeLabel(r), rec.status) // an aborted stream
					panic(p)
				}
				s.log.Error("panic serving request", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, internal("internal error"))
				}
			} else {
				s.logFailure(r, rec)
			}
			s.metrics.request(routeLabel(r), rec.status)
		}()
		_, pattern := s.mux.Handler(r)
		if pattern == "" {
			// Unknown path or wrong method: answer in the API's error shape.
			if allow := s.allowed(r); allow != "" {
				rec.Header().Set("Allow", allow)
				writeError(rec, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: str("method_not_allowed"), Message: r.Method + " is not allowed on " + r.URL.Path + "; use " + allow})
				return
			}
			writeError(rec, notFound("", "not_found", "no such endpoint: %s %s", r.Method, r.URL.Path))
			return
		}
		s.mux.ServeHTTP(rec, r)
	})
}

// allowed lists the methods the path accepts, "" if none.
func (s *Server) allowed(r *http.Request) string {
	var ms []string
	for _, m := range []string{"GET", "POST", "DELETE"} {
		rr := r.Clone(r.Context())
		rr.Method = m
		if _, p := s.mux.Handler(rr); p != "" {
			ms = append(ms, m)
		}
	}
	return strings.Join(ms, ", ")
}

func routeLabel(r *http.Request) string {
	p := r.URL.Path
	switch {
	case p == "/v1/audio/speech", p == "/v1/models", p == "/healthz", p == "/readyz", p == "/metrics", p == "/":
		return p
	case strings.HasPrefix(p, "/v1/audio/voices"):
		return "/v1/audio/voices"
	case strings.HasPrefix(p, "/v1/models/"):
		return "/v1/models"
	}
	return "other"
}

// statusRecorder remembers the status code for metrics and still exposes
// the underlying writer to http.ResponseController.
type statusRecorder struct {
	http.ResponseWriter
	status int
	// failure is the error answer writeError sent, if any.
	failure *failure
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) noteError(f failure) {
	if r.failure == nil {
		r.failure = &f
	}
}

// auth checks the API key on /v1/ endpoints.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.APIKey == "" {
		return h
	}
	want := []byte(s.cfg.APIKey)
	return func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("x-api-key")
		if a := r.Header.Get("Authorization"); got == "" && a != "" {
			if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
				got = strings.TrimSpace(a[7:])
			}
		}
		if got == "" || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nanovox"`)
			msg := "missing API key: send Authorization: Bearer <key> or x-api-key"
			if got != "" {
				msg = "invalid API key"
			}
			writeError(w, &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: str("invalid_api_key"), Message: msg})
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// modelOK reports whether a request's model names the loaded model.
func (s *Server) modelOK(name string) bool {
	if name == "" || name == s.cfg.ModelID {
		return true
	}
	for _, a := range s.cfg.Aliases {
		if strings.EqualFold(name, a) {
			return true
		}
	}
	return false
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.modelList()})
}

// handleAudioModels answers Open WebUI's GET {base}/audio/models.
func (s *Server) handleAudioModels(w http.ResponseWriter, r *http.Request) {
	var models []map[string]any
	for _, m := range s.modelList() {
		models = append(models, map[string]any{"id": m["id"], "name": m["id"]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *Server) modelList() []map[string]any {
	var out []map[string]any
	for _, id := range append([]string{s.cfg.ModelID}, s.cfg.Aliases...) {
		out = append(out, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "nanovox"})
	}
	return out
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" || !s.modelOK(id) {
		writeError(w, notFound("model", "model_not_found", "model %q is not served here", id))
		return
	}
	for _, m := range s.modelList() {
		if strings.EqualFold(m["id"].(string), id) {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	writeJSON(w, http.StatusOK, s.modelList()[0])
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	active, queued := s.eng.Active()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "model": s.cfg.ModelID, "active_streams": active, "queued": queued})
}

//go:embed web/index.html
var indexHTML []byte

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline' 'self'; media-src 'self' blob: data:")
	w.Write(indexHTML)
}

// clientGone reports whether err means the client went away or the
// request was cancelled.
func clientGone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
