package server

import (
	"encoding/json"
	"errors"
	"fmt"
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

// writeError answers with e (or a 500 for any other error).
func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = internal("internal error")
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
