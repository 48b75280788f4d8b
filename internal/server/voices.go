package server

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/voice"
)

// Voices is the saved-voice store the server uses: a voice.Backend
// (*voice.Store, a directory, or *voice.BucketStore, object storage shared
// by replicas). If it also has voice.Backend's Refresh, the server calls it
// before reading voices, so changes made elsewhere become visible.
type Voices interface {
	Get(name string) (*voice.Voice, error)
	List() []*voice.Voice
	// Save stores v and returns it as saved and the voice it replaced.
	Save(v voice.Voice, replace bool) (saved, old *voice.Voice, err error)
	Delete(name string) (*voice.Voice, error)
}

// voiceJSON is a saved voice as the API shows it.
type voiceJSON struct {
	Object       string  `json:"object"`
	Name         string  `json:"name"`
	ID           string  `json:"id"`
	Duration     float64 `json:"duration"`
	Frames       int     `json:"frames"`
	Created      int64   `json:"created"`
	CreatedAt    string  `json:"created_at"`
	RefText      string  `json:"ref_text,omitempty"`
	SourceRate   int     `json:"source_sample_rate,omitempty"`
	SourceFormat string  `json:"source_format,omitempty"`
}

func toJSON(v *voice.Voice) voiceJSON {
	return voiceJSON{
		Object: "voice", Name: v.Name, ID: v.Name, Duration: round3(v.Duration), Frames: v.Frames(),
		Created: v.Created.Unix(), CreatedAt: v.Created.UTC().Format(time.RFC3339), RefText: v.RefText,
		SourceRate: v.SourceRate, SourceFormat: v.SourceFormat,
	}
}

func (s *Server) noVoices(w http.ResponseWriter) bool {
	if s.cfg.Voices == nil {
		writeError(w, &apiError{Status: http.StatusNotImplemented, Type: "invalid_request_error", Code: str("voices_disabled"), Message: "saved voices are not enabled on this server (start it with --data-dir)"})
		return true
	}
	return false
}

// voiceError maps store errors to API errors. An error it does not know
// (an I/O fault) is a 500 whose cause is logged, not shown: it names paths.
func voiceError(err error) error {
	var ie *voice.InvalidError
	var se *voice.SpaceError
	switch {
	case errors.As(err, &se):
		return insufficientStorage(err, "cannot save voice %q: the server's voice storage is full (no space left on its disk, or its quota is exhausted); an existing voice of that name is kept", se.Name)
	case errors.Is(err, voice.ErrNotFound):
		return notFound("voice", "voice_not_found", "%v", err)
	case errors.Is(err, voice.ErrExists):
		return &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Param: str("name"), Code: str("voice_exists"), Message: err.Error() + " (send replace=true to overwrite)"}
	case errors.Is(err, voice.ErrLimit):
		return &apiError{Status: http.StatusInsufficientStorage, Type: "invalid_request_error", Code: str("voice_limit"), Message: err.Error()}
	case errors.As(err, &ie):
		param := ie.Field
		if param == "codes" || param == "source" {
			param = "file"
		}
		return badRequest(param, "invalid_voice", "%s", ie.Msg)
	}
	e := internal("the voice store failed; the server log has the cause")
	e.cause = err
	return e
}

// openAIVoices are the names of OpenAI's built-in voices, which clients
// send by default.
var openAIVoices = []string{"alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova", "onyx", "sage", "shimmer", "verse"}

// requestVoice resolves a speech request's voice name: an alias first, then
// the saved voice; an OpenAI voice name that is neither falls back to the
// default voice, or gets a 404 that says how to map it.
func (s *Server) requestVoice(name string) (*engine.Voice, error) {
	if to, ok := s.cfg.VoiceAliases[name]; ok {
		return s.savedVoice(to)
	}
	v, err := s.savedVoice(name)
	var ae *apiError
	if err == nil || !errors.As(err, &ae) || ae.Status != http.StatusNotFound || !slices.Contains(openAIVoices, strings.ToLower(name)) {
		return v, err
	}
	if s.cfg.DefaultVoice != "" {
		return s.savedVoice(s.cfg.DefaultVoice)
	}
	return nil, notFound("voice", "voice_not_found", "voice %q is one of OpenAI's voice names; nanovox clones voices instead of having presets: save a voice (POST /v1/audio/voices) and map the name to it with 'serve --voice-alias %s=NAME', or make it the default with 'serve --default-voice NAME'", name, name)
}

// savedVoice returns a saved voice for a speech request.
func (s *Server) savedVoice(name string) (*engine.Voice, error) {
	if s.cfg.Voices == nil {
		return nil, notFound("voice", "voice_not_found", "voice %q: saved voices are not enabled on this server; send {\"ref_audio\": \"<base64 audio>\"} instead", name)
	}
	notSaved := notFound("voice", "voice_not_found", "voice %q is not a saved voice; MOSS-TTS-Nano has no preset voices: save one with POST /v1/audio/voices or send {\"ref_audio\": \"<base64 audio>\"}", name)
	if voice.ValidName(name) != nil {
		return nil, notSaved // no saved voice can have this name
	}
	s.reloadVoices()
	v, err := s.cfg.Voices.Get(name)
	var ie *voice.InvalidError
	switch {
	case errors.Is(err, voice.ErrNotFound):
		return nil, notSaved
	case errors.As(err, &ie) && ie.Field == "model":
		return nil, badRequest("voice", "voice_model_mismatch", "%s", ie.Msg)
	case err != nil:
		return nil, voiceError(err)
	}
	return &engine.Voice{Codes: v.Codes, Key: "voice:" + v.Key}, nil
}

// reloadVoices brings the voice store up to date with changes made by
// other processes (nanovox voices add/rm, or other replicas sharing a
// bucket) when the store can tell (voice.Backend's Refresh): a directory
// store stats its directory and re-reads it only when it changed, at most
// once a second; a bucket store re-lists at most once per its staleness
// bound. Stores without Refresh are used as they are.
func (s *Server) reloadVoices() {
	r, ok := s.cfg.Voices.(interface{ Refresh() error })
	if !ok {
		return
	}
	if err := r.Refresh(); err != nil { // warnings are logged by the store
		s.log.Error("reload voices", "err", err)
	}
}

func (s *Server) handleVoiceList(w http.ResponseWriter, r *http.Request) {
	if s.noVoices(w) {
		return
	}
	s.reloadVoices()
	out := []voiceJSON{}
	// voices is the list in Open WebUI's shape: saved voices, then the
	// aliases that lead to one.
	voices := []map[string]string{}
	for _, v := range s.cfg.Voices.List() {
		out = append(out, toJSON(v))
		voices = append(voices, map[string]string{"id": v.Name, "name": v.Name})
	}
	for _, a := range slices.Sorted(maps.Keys(s.cfg.VoiceAliases)) {
		voices = append(voices, map[string]string{"id": a, "name": a + " → " + s.cfg.VoiceAliases[a]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out, "voices": voices})
}

func (s *Server) handleVoiceGet(w http.ResponseWriter, r *http.Request) {
	if s.noVoices(w) {
		return
	}
	s.reloadVoices()
	v, err := s.cfg.Voices.Get(r.PathValue("name"))
	if err != nil {
		writeError(w, voiceError(err))
		return
	}
	writeJSON(w, http.StatusOK, toJSON(v))
}

func (s *Server) handleVoiceDelete(w http.ResponseWriter, r *http.Request) {
	if s.noVoices(w) {
		return
	}
	name := r.PathValue("name")
	old, err := s.cfg.Voices.Delete(name)
	if err != nil {
		writeError(w, voiceError(err))
		return
	}
	// old is nil when the file could not be read (corrupt, not a regular
	// file): it was deleted all the same, and no cached prefix can belong
	// to it, since only voices that loaded have keys.
	if old != nil {
		s.eng.InvalidateVoice("voice:" + old.Key)
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "voice.deleted", "name": name, "id": name, "deleted": true})
}

// voiceUpload is the JSON form of POST /v1/audio/voices.
type voiceUpload struct {
	Name     *string `json:"name"`
	RefAudio *string `json:"ref_audio"`
	RefText  *string `json:"ref_text"`
	Replace  *bool   `json:"replace"`
}

func (s *Server) handleVoiceAdd(w http.ResponseWriter, r *http.Request) {
	if s.noVoices(w) {
		return
	}
	if s.draining.Load() {
		writeError(w, busy("the server is shutting down"))
		return
	}
	// The same gates as a speech request's inline clip (admit.go): the
	// body's memory is reserved before it is read, and the clip's decode
	// takes one of --clip-decodes, both held until the clip is encoded.
	releaseBody, ok := s.reserveBody(w, r)
	if !ok {
		return
	}
	defer releaseBody()
	decode, err := s.clips.acquire(r.Context(), 1)
	if err != nil {
		return
	}
	defer s.clips.release(decode)
	name, clip, refText, replace, clipParam, err := s.parseVoiceUpload(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := voice.ValidName(name); err != nil {
		writeError(w, badRequest("name", "invalid_name", "%v", err))
		return
	}
	s.reloadVoices()
	if !replace {
		if _, err := s.cfg.Voices.Get(name); err == nil {
			writeError(w, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Param: str("name"), Code: str("voice_exists"),
				Message: fmt.Sprintf("voice %q already exists; send replace=true to overwrite it", name)})
			return
		}
	}
	fam := s.eng.Family()
	ref, err := audio.PrepareReference(clip, audio.Options{MaxInputBytes: s.cfg.MaxRefAudioBytes, TargetRate: fam.Info().SampleRate})
	if err != nil {
		writeError(w, audioError(clipParam, err))
		return
	}
	ev, err := s.eng.Encode(r.Context(), ref.Interleaved())
	if err != nil {
		if !clientGone(err) {
			writeError(w, s.engineError(err))
		}
		return
	}
	v := voice.Voice{
		Name: name, Model: s.cfg.VoiceModel, Codes: ev.Codes, RefText: refText,
		Duration: ref.Duration().Seconds(), SourceRate: ref.SourceRate, SourceChannels: ref.SourceChannels, SourceFormat: ref.SourceFormat,
	}
	// Answer with what Save stored, not with a Get after it: another
	// process sharing the directory may delete or replace the voice at any
	// moment, and a reload in between made a successful save answer 404.
	saved, old, err := s.cfg.Voices.Save(v, replace)
	if err != nil {
		writeError(w, voiceError(err))
		return
	}
	if old != nil {
		s.eng.InvalidateVoice("voice:" + old.Key)
	}
	s.log.Info("voice saved", "voice", name, "frames", saved.Frames(), "replaced", old != nil)
	writeJSON(w, http.StatusCreated, toJSON(saved))
}

// parseVoiceUpload reads multipart (name, file, ref_text, replace) or JSON
// ({name, ref_audio: base64, ref_text, replace}).
func (s *Server) parseVoiceUpload(w http.ResponseWriter, r *http.Request) (name string, clip []byte, refText string, replace bool, clipParam string, err error) {
	body := http.MaxBytesReader(w, r.Body, s.cfg.Limits.MaxBodyBytes)
	r.Body = body // the multipart reader below reads through the limit
	mt, params, perr := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if perr != nil && r.Header.Get("Content-Type") != "" {
		mt = "invalid"
	}
	switch mt {
	case "application/json", "", "application/x-www-form-urlencoded", "text/plain":
		clipParam = "ref_audio"
		var u voiceUpload
		if err = strictDecode(body, &u); err != nil {
			return
		}
		if u.Name == nil {
			err = badRequest("name", "missing_name", "name is required")
			return
		}
		if u.RefAudio == nil {
			err = badRequest("ref_audio", "missing_ref_audio", "ref_audio (base64 audio) is required")
			return
		}
		name = *u.Name
		if clip, err = decodeBase64(*u.RefAudio); err != nil {
			err = badRequest("ref_audio", "invalid_base64", "ref_audio is not valid base64: %v", err)
			return
		}
		if u.RefText != nil {
			refText = *u.RefText
		}
		if u.Replace != nil {
			replace = *u.Replace
		}
		if len(clip) == 0 {
			err = badRequest("ref_audio", "empty_ref_audio", "ref_audio is empty")
		}
		return
	case "multipart/form-data":
		clipParam = "file"
		if params["boundary"] == "" {
			err = badRequest("", "invalid_multipart", "multipart body without a boundary")
			return
		}
		mr, merr := r.MultipartReader()
		if merr != nil {
			err = badRequest("", "invalid_multipart", "%v", merr)
			return
		}
		seen := map[string]bool{}
		for {
			p, perr := mr.NextPart()
			if perr == io.EOF {
				break
			}
			if perr != nil {
				err = multipartError(perr)
				return
			}
			field := p.FormName()
			if seen[field] {
				err = badRequest(field, "duplicate_field", "field %q appears more than once", field)
				return
			}
			seen[field] = true
			limit := int64(4 << 10)
			if field == "file" {
				limit = s.cfg.Limits.MaxBodyBytes
			}
			b, rerr := io.ReadAll(io.LimitReader(p, limit+1))
			if rerr != nil {
				err = multipartError(rerr)
				return
			}
			if int64(len(b)) > limit {
				err = tooLarge(field, "field %q is larger than %d bytes", field, limit)
				return
			}
			switch field {
			case "name":
				name = string(b)
			case "file":
				clip = b
			case "ref_text":
				refText = string(b)
			case "replace":
				replace, rerr = strconv.ParseBool(strings.TrimSpace(string(b)))
				if rerr != nil {
					err = badRequest("replace", "invalid_value", "replace must be true or false")
					return
				}
			default:
				err = badRequest(field, "unknown_parameter", "unknown field %q (name, file, ref_text, replace)", field)
				return
			}
		}
		switch {
		case !seen["name"]:
			err = badRequest("name", "missing_name", "name is required")
		case len(clip) == 0:
			err = badRequest("file", "missing_file", "file (the reference clip) is required and must not be empty")
		}
		return
	default:
		err = &apiError{Status: http.StatusUnsupportedMediaType, Type: "invalid_request_error", Code: str("unsupported_media_type"),
			Message: fmt.Sprintf("Content-Type %q is not supported; send multipart/form-data or application/json", mt)}
		return
	}
}

func multipartError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge("", "request body is larger than the server's limit of %d bytes", mbe.Limit)
	}
	return badRequest("", "invalid_multipart", "malformed multipart body: %v", err)
}
