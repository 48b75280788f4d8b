package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
)

// apiError is an error answered in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	// RetryAfter, if positive, is sent as a Retry-After header (seconds).
	RetryAfter int `json:"-"`
	// cause is the fault behind a 5xx, for the log only: it may name
	// server paths the client must not see.
	cause error
}

func (e *apiError) Error() string { return e.Message }

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// badRequest is a 400 naming the offending parameter.
func badRequest(param, code, format string, a ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: str(param), Code: str(code), Message: fmt.Sprintf(format, a...)}
}

func notFound(param, code, format string, a ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: str(param), Code: str(code), Message: fmt.Sprintf(format, a...)}
}

func tooLarge(param, format string, a ...any) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Param: str(param), Code: str("request_too_large"), Message: fmt.Sprintf(format, a...)}
}

func busy(msg string) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: str("server_busy"), Message: msg, RetryAfter: 1}
}

func internal(msg string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: str("internal_error"), Message: msg}
}

// internalCause is a 500 whose cause the request log shows (and the
// client does not): the one log line of that failure.
func internalCause(cause error, msg string) *apiError {
	e := internal(msg)
	e.cause = cause
	return e
}

// insufficientStorage is a 507 for a save that found the disk full.
func insufficientStorage(cause error, format string, a ...any) *apiError {
	return &apiError{Status: http.StatusInsufficientStorage, Type: "server_error", Code: str("insufficient_storage"), Message: fmt.Sprintf(format, a...), cause: cause}
}

// failure is what the request log needs of an error answer.
type failure struct {
	status int
	code   string
	msg    string
	cause  error
}

// errorNoter is a response writer that keeps the error it answered with,
// so the request's 5xx can be logged with its cause (statusRecorder).
type errorNoter interface{ noteError(failure) }

// writeError answers with e (or a 500 for any other error, which is then
// the cause the request log shows).
func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = internal("internal error")
		e.cause = err
	}
	for rw := w; rw != nil; {
		if n, ok := rw.(errorNoter); ok {
			f := failure{status: e.Status, msg: e.Message, cause: e.cause}
			if e.Code != nil {
				f.code = *e.Code
			}
			n.noteError(f)
			break
		}
		u, ok := rw.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		rw = u.Unwrap()
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(map[string]*apiError{"error": e})
}

// logFailure logs a request answered with a 5xx, with the error behind it,
// so that no server-side failure goes unrecorded. Faults (a 500, or any
// answer with a cause, such as a full disk) are errors; deliberate refusals
// (503 busy or draining, 501, 507 voice limit) are warnings.
func (s *Server) logFailure(r *http.Request, rec *statusRecorder) {
	if rec.status < 500 {
		return
	}
	level, msg := slog.LevelWarn, "request refused"
	attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status}
	if f := rec.failure; f != nil {
		attrs = append(attrs, "code", f.code, "reason", f.msg)
		if f.cause != nil {
			attrs = append(attrs, "err", f.cause.Error())
		}
	}
	if rec.status == http.StatusInternalServerError || (rec.failure != nil && rec.failure.cause != nil) {
		level, msg = slog.LevelError, "request failed"
	}
	s.log.Log(r.Context(), level, msg, attrs...)
}
