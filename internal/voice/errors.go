package voice

import (
	"errors"
	"fmt"
)

// Errors a caller can test for with errors.Is. The errors the store returns
// carry a message for the user and wrap one of these.
var (
	// ErrNotFound: there is no saved voice by that name (HTTP 404).
	ErrNotFound = errors.New("voice not found")
	// ErrExists: a voice by that name (or by the same name in another case)
	// already exists and replace was not requested (HTTP 409).
	ErrExists = errors.New("voice already exists")
	// ErrLimit: the store already holds Options.MaxVoices voices. Every such
	// error is a *LimitError. The request was valid but cannot be stored
	// (HTTP 507 Insufficient Storage).
	ErrLimit = errors.New("voice limit reached")
	// ErrNoSpace: the file system holding the store is full, or the
	// writer's disk quota is exhausted. Every such error is a *SpaceError.
	// Nothing was changed: an older version of the voice is kept (HTTP 507
	// Insufficient Storage).
	ErrNoSpace = errors.New("no space left for voices")
)

// InvalidError is a problem with what the caller asked for: a bad name, bad
// codes or metadata, or a voice saved for a different codec (HTTP 400). Its
// message is written for the user.
type InvalidError struct {
	// Field is the part that is wrong: "name", "codes", "model", "ref_text",
	// "created" or "source".
	Field string
	// Msg is the complete message.
	Msg string
}

// Error returns the user-facing message.
func (e *InvalidError) Error() string { return e.Msg }

func invalidf(field, format string, args ...any) *InvalidError {
	return &InvalidError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// LimitError reports that adding a voice would exceed Options.MaxVoices.
// errors.Is(err, ErrLimit) is true for it.
type LimitError struct {
	// Name is the voice that could not be added.
	Name string
	// Max is the limit.
	Max int
}

// Error returns the user-facing message.
func (e *LimitError) Error() string {
	return fmt.Sprintf("cannot save voice %q: the store already holds %d voices, its limit; delete one first", e.Name, e.Max)
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// SpaceError reports a save that failed because the disk is full or the
// quota exhausted (ENOSPC, EDQUOT; ERROR_DISK_FULL on Windows).
// errors.Is(err, ErrNoSpace) is true for it; Unwrap returns the system
// error, with the path.
type SpaceError struct {
	// Name is the voice that could not be saved.
	Name string
	// Err is the failed file operation.
	Err error
}

// Error returns a message for the user and the operator.
func (e *SpaceError) Error() string {
	return fmt.Sprintf("cannot save voice %q: no space left for the voice store (%v); an existing voice of that name is kept", e.Name, e.Err)
}

// Unwrap returns the system error.
func (e *SpaceError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNoSpace) true.
func (e *SpaceError) Is(target error) bool { return target == ErrNoSpace }

// saveError gives an I/O error of a save its context, as a *SpaceError
// when the disk is full.
func saveError(name string, err error) error {
	if isNoSpace(err) {
		return &SpaceError{Name: name, Err: err}
	}
	return fmt.Errorf("save voice %q: %w", name, err)
}

// stateError is ErrNotFound or ErrExists with a message naming the voice.
type stateError struct {
	msg  string
	kind error
}

func (e *stateError) Error() string { return e.msg }
func (e *stateError) Unwrap() error { return e.kind }

func notFound(name string) error {
	return &stateError{msg: fmt.Sprintf("no saved voice named %q", name), kind: ErrNotFound}
}

func exists(format string, args ...any) error {
	return &stateError{msg: fmt.Sprintf(format, args...), kind: ErrExists}
}

// A Warning reports a file that Open or Reload skipped, and why.
type Warning struct {
	// Path is the skipped file.
	Path string
	// Err says what is wrong with it.
	Err error
}

// String returns "skipped PATH: REASON".
func (w Warning) String() string { return fmt.Sprintf("skipped %s: %v", w.Path, w.Err) }

// fileErrorKind classifies why a voice file was rejected.
type fileErrorKind uint8

const (
	fileTruncated  fileErrorKind = iota + 1 // shorter than its declared content
	fileForeign                             // not a voice file (wrong magic)
	fileNewVersion                          // a format version newer than this reader
	fileChecksum                            // content does not match its SHA-256
	fileCorrupt                             // checksum fine but content invalid
	fileTooLarge                            // over the size or frame limit
	fileNotRegular                          // a directory, device, …
	fileWrongName                           // holds a different voice than its name says
)

// fileError is the Err of a Warning about a file's content.
type fileError struct {
	kind fileErrorKind
	msg  string
}

func (e *fileError) Error() string { return e.msg }

func fileErrorf(kind fileErrorKind, format string, args ...any) *fileError {
	return &fileError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
