package server

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/audio/encode"
	"github.com/nanovox/nanovox/internal/engine"
)

// bufferedChunkFrames is the engine chunk size for non-streamed requests.
const bufferedChunkFrames = 64

func (s *Server) handleSpeech(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if s.draining.Load() {
		writeError(w, busy("the server is shutting down"))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		// curl -d sends application/x-www-form-urlencoded unless told
		// otherwise; such bodies are still parsed as JSON.
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && mt != "application/x-www-form-urlencoded" && mt != "text/plain") {
			writeError(w, &apiError{Status: http.StatusUnsupportedMediaType, Type: "invalid_request_error", Code: str("unsupported_media_type"), Message: fmt.Sprintf("Content-Type %q is not supported; send application/json", ct)})
			return
		}
	}
	// Reserve the body's memory before reading it (admit.go); what was
	// reserved is returned once the body's buffer is dropped.
	releaseBody, ok := s.reserveBody(w, r)
	if !ok {
		return
	}
	defer releaseBody()
	limit := s.cfg.Limits.MaxBodyBytes
	rearmBody(r) // the body deadline counts from now, not from arrival
	data, err := readBody(r.Body, r.ContentLength, limit)
	if err != nil {
		if ae, ok := err.(*apiError); ok {
			if ae.Status == http.StatusRequestTimeout {
				s.log.Info("request body cut", "reason", "not received within --body-timeout", "timeout", s.cfg.BodyTimeout.String())
			}
			writeError(w, err)
		} else {
			writeError(w, badRequest("", "invalid_body", "could not read the request body"))
		}
		return
	}
	var req speechRequest
	ignored, err := decodeObject(data, &req, s.cfg.StrictParams)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Instructions != nil && strings.TrimSpace(*req.Instructions) != "" {
		ignored = append(ignored, "instructions")
	}
	if len(ignored) > 0 {
		w.Header().Set("X-Ignored-Parameters", strings.Join(ignored, ", "))
		s.log.Debug("ignored request parameters", "params", ignored)
	}
	clipHeld := int64(0)
	defer func() { s.clips.release(clipHeld) }()
	if req.Voice != nil && req.Voice.Inline {
		// Parsing and resampling expand the clip: at most --clip-decodes
		// requests hold a decoded one, until the engine has encoded it.
		if clipHeld, err = s.clips.acquire(r.Context(), 1); err != nil {
			return
		}
	}
	v, err := req.validate(policy{Limits: s.cfg.Limits, modelOK: s.modelOK, format: s.cfg.DefaultFormat, sampleRate: s.cfg.SampleRate, defaultVoice: s.cfg.DefaultVoice, modelRate: s.eng.Family().Info().SampleRate})
	if err != nil {
		writeError(w, err)
		return
	}
	ereq, err := s.engineRequest(v)
	// The clip's bytes live in the body's buffer: drop every reference to
	// it so the memory can be collected while the request waits for a slot.
	data, req.Voice, v.refAudio = nil, nil, nil
	releaseBody()
	if err != nil {
		writeError(w, err)
		return
	}
	// Everything above ran before taking a slot; Submit waits for one.
	st, err := s.eng.Submit(r.Context(), ereq)
	ereq.RefPCM = nil // encoded by now (or never will be)
	s.clips.release(clipHeld)
	clipHeld = 0
	if err != nil {
		if !clientGone(err) {
			writeError(w, s.engineError(err))
		}
		return
	}
	defer st.Close()
	log := s.log.With("chars", len([]rune(v.input)), "stream", v.stream, "sse", v.sse, "format", v.format.String(), "seed", ereq.Params.Seed)
	if v.voiceName != "" {
		log = log.With("voice", v.voiceName)
	} else {
		log = log.With("voice", "inline")
	}
	h := w.Header()
	h.Set("X-Seed", strconv.FormatUint(ereq.Params.Seed, 10))
	started := false
	if v.stream {
		started, err = s.writeStream(w, r, st, v)
	} else {
		err = s.writeBuffered(w, r, st, v)
	}
	st.Close()
	stats := st.Stats()
	switch {
	case err == nil:
		log.Info("speech", "frames", stats.Frames, "audio_s", round3(stats.AudioSeconds), "wall_s", round3(time.Since(start).Seconds()))
	case clientGone(err) || errors.Is(err, errClientStalled):
		log.Info("speech cancelled", "reason", err.Error(), "frames", stats.Frames)
	case errors.As(err, new(answered)):
		// Answered with an error status: the request log (logFailure)
		// has its line, with the cause.
	default:
		log.Error("speech failed", "err", err, "frames", stats.Frames)
		if started && !v.sse {
			// A raw or WAV stream has no way to say "failed" once the
			// status is sent: abort the connection so the client sees an
			// incomplete transfer instead of a clean end.
			panic(http.ErrAbortHandler)
		}
	}
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// engineRequest resolves the voice and sampling parameters. Decoding and
// checking an inline clip happens here, before the request takes a slot.
func (s *Server) engineRequest(v *validated) (engine.Request, error) {
	fam := s.eng.Family()
	req := engine.Request{Text: v.input, FirstChunkFrames: bufferedChunkFrames, ChunkFrames: bufferedChunkFrames}
	if v.stream {
		req.FirstChunkFrames, req.ChunkFrames = v.firstFrames, v.chunkFrames
		req.RampChunks = true
	}
	p := fam.DefaultParams()
	if v.noNormalize {
		p.Normalize = false
	}
	if v.seed != nil {
		p.Seed = *v.seed
	} else {
		var b [8]byte
		rand.Read(b[:])
		p.Seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	if v.temperature != nil {
		p.Temperature = *v.temperature
	}
	if v.topP != nil {
		p.TopP = *v.topP
	}
	if v.topK != nil {
		p.TopK = *v.topK
	}
	if v.repPenalty != nil {
		p.RepetitionPenalty = *v.repPenalty
	}
	p.MaxFrames = min(p.MaxFrames, s.cfg.Limits.MaxNewFrames)
	if v.maxFrames != nil {
		p.MaxFrames = *v.maxFrames
	}
	if err := p.Validate(); err != nil {
		var pe *engine.ParamError
		if errors.As(err, &pe) {
			param := pe.Param
			if param == "max_frames" {
				param = "max_new_frames"
			}
			return req, badRequest(param, "invalid_value", "%s must be %s, is %s", param, pe.Want, pe.Got)
		}
		return req, err
	}
	req.Params = p
	if v.voiceName != "" {
		ev, err := s.requestVoice(v.voiceName)
		if err != nil {
			return req, err
		}
		req.Voice = ev
	} else {
		ref, err := audio.PrepareReference(v.refAudio, audio.Options{MaxInputBytes: s.cfg.MaxRefAudioBytes, TargetRate: fam.Info().SampleRate})
		if err != nil {
			return req, audioError("voice.ref_audio", err)
		}
		sum := sha256.Sum256(v.refAudio)
		req.RefPCM = ref.Interleaved()
		req.RefKey = "inline:" + hex.EncodeToString(sum[:])
	}
	return req, nil
}

// audioError maps a reference-clip problem to 400 (413 when too large).
func audioError(param string, err error) error {
	var ae *audio.Error
	if errors.As(err, &ae) {
		if ae.Kind == audio.KindTooLarge {
			return tooLarge(param, "%s", ae.Msg)
		}
		return badRequest(param, "invalid_audio", "%s", ae.Msg)
	}
	return err
}

// engineError maps Submit errors to API errors.
func (s *Server) engineError(err error) error {
	switch {
	case errors.Is(err, engine.ErrBusy):
		return busy("all generation slots are busy and the queue is full; retry shortly")
	case errors.Is(err, engine.ErrClosed):
		return busy("the server is shutting down")
	case engine.IsInputError(err):
		return badRequest("", "invalid_request", "%v", err)
	}
	return internalCause(err, "could not start generation")
}

// newOutput returns the converter and encoder of a request's audio,
// writing to dst, and sets the headers that describe the audio.
func (s *Server) newOutput(h http.Header, dst io.Writer, v *validated) (*encode.Output, error) {
	info := s.eng.Family().Info()
	out, err := encode.NewOutput(dst, encode.OutputOptions{
		Format: v.format, InRate: info.SampleRate, InChannels: info.Channels, Channels: 1,
		SampleRate: v.sampleRate, Bitrate: v.bitrate, Speed: v.speed,
	})
	if err != nil {
		return nil, err
	}
	h.Set("X-Audio-Sample-Rate", strconv.Itoa(out.SampleRate()))
	h.Set("X-Audio-Channels", "1")
	if v.format == encode.PCM || v.format == encode.WAV {
		h.Set("X-Audio-Sample-Format", "s16le")
	}
	return out, nil
}

func (s *Server) writeBuffered(w http.ResponseWriter, r *http.Request, st *engine.Stream, v *validated) error {
	var body encode.Buffer
	out, err := s.newOutput(w.Header(), &body, v)
	if err != nil {
		writeError(w, internalCause(err, "could not start the encoder"))
		return answered{err}
	}
	for {
		c, err := st.Next(r.Context())
		if err == io.EOF {
			break
		}
		if err == nil {
			err = out.Write(c.Samples)
		}
		if err != nil {
			if clientGone(err) {
				return err
			}
			writeError(w, internalCause(err, "generation failed"))
			return answered{err}
		}
	}
	if err := out.Close(); err != nil {
		writeError(w, internalCause(err, "encoding failed"))
		return answered{err}
	}
	h := w.Header()
	h.Set("Content-Type", v.format.ContentType())
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(s.cfg.IdleWriteTimeout + time.Duration(body.Len()/(64<<10))*time.Second))
	_, err = w.Write(body.Bytes())
	return err
}

// answered marks a failure that was answered with an error status, which
// the request log records with its cause; handleSpeech does not log it a
// second time.
type answered struct{ err error }

func (a answered) Error() string { return a.err.Error() }
func (a answered) Unwrap() error { return a.err }

var errClientStalled = errors.New("client stopped reading (idle write timeout)")

// writeStream sends audio as it comes: the format's bytes as they are
// encoded (a WAV stream's header says its sizes are unknown), or SSE events
// carrying them in base64. Headers wait for the first chunk so a failure
// before any audio still gets an error status.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, st *engine.Stream, v *validated) (started bool, err error) {
	ctx := r.Context()
	rc := http.NewResponseController(w)
	write := func(b []byte) error {
		rc.SetWriteDeadline(time.Now().Add(s.cfg.IdleWriteTimeout))
		_, err := w.Write(b)
		if err == nil {
			err = rc.Flush()
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The failed write cancels the request's context too, so
			// the deadline is checked first: it is the real reason.
			return fmt.Errorf("%w: %v", errClientStalled, err)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", errClientStalled, err)
	}
	// The encoder writes into pending; each chunk's bytes go out (or into
	// an SSE event) once the chunk is encoded and flushed. (A bytes.Buffer
	// cannot be rewritten, so a WAV stream's header keeps its "unknown
	// size" marks.)
	var pending bytes.Buffer
	out, err := s.newOutput(w.Header(), &pending, v)
	if err != nil {
		writeError(w, internalCause(err, "could not start the encoder"))
		return false, answered{err}
	}
	send := func() error {
		if pending.Len() == 0 {
			return nil
		}
		var err error
		if v.sse {
			err = write(sseEvent(map[string]any{"type": "speech.audio.delta", "audio": base64.StdEncoding.EncodeToString(pending.Bytes())}))
		} else {
			err = write(pending.Bytes())
		}
		pending.Reset()
		return err
	}
	begin := func() {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		if v.sse {
			h.Set("Content-Type", "text/event-stream")
		} else {
			h.Set("Content-Type", v.format.ContentType())
		}
		w.WriteHeader(http.StatusOK)
		started = true
	}
	for {
		c, err := st.Next(ctx)
		if err == io.EOF {
			break
		}
		if err == nil {
			if err = out.Write(c.Samples); err == nil {
				err = out.Flush()
			}
		}
		if err != nil {
			if !started && !clientGone(err) {
				writeError(w, internalCause(err, "generation failed"))
				return false, answered{err}
			} else if v.sse && started && !clientGone(err) {
				write(sseEvent(map[string]any{"type": "error", "error": map[string]string{"message": "generation failed", "type": "server_error"}}))
			}
			return started, err
		}
		if !started {
			begin()
		}
		if err := send(); err != nil {
			return started, err
		}
	}
	if err := out.Close(); err != nil {
		if !started {
			writeError(w, internalCause(err, "encoding failed"))
			return false, answered{err}
		}
		return started, err
	}
	if !started {
		begin()
	}
	if err := send(); err != nil {
		return started, err
	}
	if v.sse {
		stats := st.Stats()
		in := st.InputTokens()
		return started, write(sseEvent(map[string]any{"type": "speech.audio.done", "usage": map[string]int{
			"input_tokens": in, "output_tokens": stats.Frames, "total_tokens": in + stats.Frames,
		}}))
	}
	return started, nil
}

func sseEvent(v any) []byte {
	b, _ := json.Marshal(v)
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, '\n', '\n')
}
