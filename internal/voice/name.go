package voice

import (
	"fmt"
	"strings"
)

// MaxNameLen is the longest voice name, in bytes (names are ASCII).
const MaxNameLen = 64

const nameRule = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// ValidName reports whether name can name a saved voice. The error is an
// *InvalidError with Field "name" whose message tells the user what to do.
func ValidName(name string) error {
	if name == "" {
		return invalidf("name", "voice name is empty: %s", nameRule)
	}
	if len(name) > MaxNameLen {
		return invalidf("name", "voice name %s is too long (%d bytes): %s", quoteShort(name), len(name), nameRule)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := isAlnum(c) || (i > 0 && (c == '.' || c == '_' || c == '-'))
		if !ok {
			return invalidf("name", "voice name %q is invalid: %s", name, nameRule)
		}
	}
	if strings.Contains(name, "..") {
		return invalidf("name", "voice name %q is invalid: it must not contain \"..\"", name)
	}
	if name[len(name)-1] == '.' {
		// Windows drops trailing dots from file names.
		return invalidf("name", "voice name %q is invalid: it must not end with '.'", name)
	}
	if reservedName(name) {
		return invalidf("name", "voice name %q is reserved (a device name on Windows): choose another", name)
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// reservedName reports Windows device names, which stay devices whatever
// their case or extension ("CON", "nul.voice", "com1.x").
func reservedName(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.ToLower(base)
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) {
		return '0' <= base[3] && base[3] <= '9'
	}
	return false
}

// quoteShort quotes s for a message, cut to a readable length.
func quoteShort(s string) string {
	const n = MaxNameLen
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", s[:n])
}
