package hub

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies an *Error so that callers can pick an exit code or an HTTP
// status without matching strings.
type Kind uint8

// Kinds of *Error. The zero Kind is never used by this package; [KindOf] returns
// it for errors that are not an *Error (local file system failures and the like).
const (
	// KindInvalidModel: the model argument is neither a directory nor a valid repo id.
	KindInvalidModel Kind = iota + 1
	// KindNotFound: the repository (or one of its files) does not exist, or is
	// private and no token that can see it was sent.
	KindNotFound
	// KindRevisionNotFound: the repository exists but the branch, tag or commit does not.
	KindRevisionNotFound
	// KindAccessDenied: 401/403; the repository is gated or private, or the token lacks access.
	KindAccessDenied
	// KindNotCached: the model is not (completely) in the cache and the Hub cannot
	// be used (offline mode, unreachable, or failing with 5xx).
	KindNotCached
	// KindNetwork: a download failed after its retries; running again resumes it.
	KindNetwork
	// KindIntegrity: the Hub sent data that failed verification (size or sha256),
	// or metadata that is malformed.
	KindIntegrity
)

var kindNames = [...]string{
	KindInvalidModel:     "invalid model",
	KindNotFound:         "not found",
	KindRevisionNotFound: "revision not found",
	KindAccessDenied:     "access denied",
	KindNotCached:        "not cached",
	KindNetwork:          "network",
	KindIntegrity:        "integrity",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// UserError reports whether errors of this kind are the user's to fix (a wrong
// argument, a missing token, no network) rather than a fault of the data received.
func (k Kind) UserError() bool {
	switch k {
	case KindInvalidModel, KindNotFound, KindRevisionNotFound, KindAccessDenied, KindNotCached:
		return true
	}
	return false
}

// Error is the error type returned for every failure the user can act on. Its
// message is complete and says what to do; Err, when set, is the underlying cause.
type Error struct {
	Kind Kind
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the first *Error in err's chain, or 0 if there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func invalidf(format string, args ...any) *Error {
	return &Error{Kind: KindInvalidModel, Msg: fmt.Sprintf(format, args...)}
}

// unreachableError marks a failure to talk to the Hub at all (connection refused,
// DNS, timeouts, persistent 5xx) as opposed to an answer from it. It is the
// condition under which a cached snapshot is used instead.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// displayModel is how a repo and revision are shown in messages and commands.
func displayModel(repo, rev string) string {
	if rev == "" || rev == DefaultRevision {
		return repo
	}
	return repo + "@" + rev
}

// cleanHubMessage makes a server-provided X-Error-Message safe to print.
func cleanHubMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
