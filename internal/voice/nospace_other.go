//go:build !unix && !windows

package voice

// isNoSpace reports a full disk; this platform's errors are not classified.
func isNoSpace(error) bool { return false }
