package hub

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// DefaultRevision is the revision used when a repo id names none.
const DefaultRevision = "main"

// maxRepoPart bounds each half of a repo id, as the Hub does for repository names.
const maxRepoPart = 96

// ParseRepoID splits a model id of the form "org/name" or "org/name@revision"
// into the repository and the revision (a branch, tag or commit hash; "main"
// when none is given) and validates both. Errors are of type *Error with
// [KindInvalidModel].
func ParseRepoID(s string) (repo, revision string, err error) {
	repo, revision, hasRev := strings.Cut(s, "@")
	if err := ValidateRepoID(repo); err != nil {
		return "", "", err
	}
	if !hasRev {
		return repo, DefaultRevision, nil
	}
	if err := validateRevision(revision); err != nil {
		return "", "", invalidf("invalid revision in %q: %v", s, err)
	}
	return repo, revision, nil
}

// ValidateRepoID reports whether repo is a well-formed "org/name" repository id:
// exactly one slash; each part 1–96 characters from [A-Za-z0-9_.-], starting and
// ending with a letter, digit or '_'; no "--" or ".."; no ".git" suffix. These are
// huggingface_hub's rules, except that a namespace is required. Errors are of type
// *Error with [KindInvalidModel].
func ValidateRepoID(repo string) error {
	const want = `want "org/name", e.g. "OpenMOSS-Team/MOSS-TTS-Nano-100M"`
	switch n := strings.Count(repo, "/"); {
	case repo == "":
		return invalidf("empty repo id: %s", want)
	case n == 0:
		return invalidf("invalid repo id %q: no organization; %s", repo, want)
	case n > 1:
		return invalidf("invalid repo id %q: %d slashes; %s", repo, n, want)
	}
	org, name, _ := strings.Cut(repo, "/")
	for _, p := range []struct{ what, s string }{{"organization", org}, {"name", name}} {
		if err := validateRepoPart(p.s); err != nil {
			return invalidf("invalid repo id %q: the %s %v; %s", repo, p.what, err, want)
		}
	}
	if strings.HasSuffix(repo, ".git") {
		return invalidf("invalid repo id %q: must not end in \".git\"", repo)
	}
	return nil
}

func validateRepoPart(s string) error {
	if s == "" {
		return fmt.Errorf("is empty")
	}
	if len(s) > maxRepoPart {
		return fmt.Errorf("is %d characters long (at most %d)", len(s), maxRepoPart)
	}
	for i := 0; i < len(s); i++ {
		if !isRepoChar(s[i]) {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return fmt.Errorf("%q contains %q (only letters, digits, '-', '_' and '.' are allowed)", s, r)
		}
	}
	if !isWordChar(s[0]) || !isWordChar(s[len(s)-1]) {
		return fmt.Errorf("%q must start and end with a letter, digit or '_'", s)
	}
	if strings.Contains(s, "--") || strings.Contains(s, "..") {
		return fmt.Errorf("%q must not contain \"--\" or \"..\"", s)
	}
	return nil
}

func isWordChar(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isRepoChar(c byte) bool { return isWordChar(c) || c == '-' || c == '.' }

// validateRevision accepts branch, tag and commit names as git does, minus the
// characters that would make refs/{revision} unsafe or unportable as a path.
func validateRevision(rev string) error {
	switch {
	case rev == "":
		return fmt.Errorf("the revision after \"@\" is empty")
	case len(rev) > 255:
		return fmt.Errorf("the revision is %d bytes long (at most 255)", len(rev))
	case !utf8.ValidString(rev):
		return fmt.Errorf("the revision is not valid UTF-8")
	case rev == "@" || strings.Contains(rev, "@{") || strings.Contains(rev, ".."):
		return fmt.Errorf("revision %q is not a branch, tag or commit name", rev)
	}
	for _, r := range rev {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\<>|\"", r) {
			return fmt.Errorf("revision %q contains %q", rev, r)
		}
	}
	for part := range strings.SplitSeq(rev, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") || strings.HasSuffix(part, ".") {
			return fmt.Errorf("revision %q is not a valid branch, tag or commit name", rev)
		}
	}
	return nil
}

// RepoFolderName is the directory name of repo in the cache: "models--org--name".
func RepoFolderName(repo string) string {
	return "models--" + strings.ReplaceAll(repo, "/", "--")
}

// isCommitHash reports whether s is a full 40-hex git commit id, the only kind of
// revision that names a snapshot directly.
func isCommitHash(s string) bool { return isLowerHex(s, 40) }

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validFileName reports whether a repository file name from the network is safe
// to use as a path below a snapshot directory.
func validFileName(name string) bool {
	if !fs.ValidPath(name) || name == "." || len(name) > 1024 {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return false
		}
	}
	return filepath.IsLocal(filepath.FromSlash(name))
}
