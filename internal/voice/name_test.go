package voice

import (
	"errors"
	"strings"
	"testing"
)

func TestValidNameAccepts(t *testing.T) {
	good := []string{
		"a", "Z", "0", "bob", "Bob_2", "my-voice.v2", "a.b.c", "a_", "a-", "9lives",
		"con1", "console", "nulx", "com10", "lpt", "x.con", "auxiliary", "A.B-C_D",
		strings.Repeat("x", MaxNameLen),
	}
	for _, name := range good {
		if err := ValidName(name); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", name, err)
		}
	}
}

func TestValidNameRejects(t *testing.T) {
	bad := []struct {
		name, want string // want: a substring of the message
	}{
		{"", "voice name is empty: use 1-64"},
		{strings.Repeat("x", MaxNameLen+1), "too long (65 bytes)"},
		{strings.Repeat("y", 10000), "too long (10000 bytes)"},
		{"../x", nameRule},
		{"..", nameRule},
		{".", nameRule},
		{"a/b", nameRule},
		{`a\b`, nameRule},
		{"/abs", nameRule},
		{".hidden", nameRule},
		{"-dash", nameRule},
		{"_under", nameRule},
		{"a..b", `must not contain ".."`},
		{"a.", "must not end with '.'"},
		{"con", "reserved"},
		{"CON", "reserved"},
		{"Con.txt", "reserved"},
		{"nul.voice", "reserved"},
		{"aux", "reserved"},
		{"prn", "reserved"},
		{"com1", "reserved"},
		{"COM9", "reserved"},
		{"lpt0", "reserved"},
		{"lpt5.x", "reserved"},
		{"héllo", nameRule},
		{"日本", nameRule},
		{"ａ", nameRule},   // fullwidth a
		{"ﬁle", nameRule}, // ligature
		{"a b", nameRule},
		{" a", nameRule},
		{"a ", nameRule},
		{"a\x00b", nameRule},
		{"\x00", nameRule},
		{"a\nb", nameRule},
		{"a\tb", nameRule},
		{"a:b", nameRule},
		{"a*b", nameRule},
		{"a?b", nameRule},
		{`a"b`, nameRule},
		{"a<b>", nameRule},
		{"a|b", nameRule},
		{"a@b", nameRule}, // '@' separates name and version in keys
		{"a%2fb", nameRule},
		{"~a", nameRule},
		{"a\xffb", nameRule},
	}
	for _, tc := range bad {
		err := ValidName(tc.name)
		var ie *InvalidError
		if !errors.As(err, &ie) {
			t.Errorf("ValidName(%q) = %v, want *InvalidError", tc.name, err)
			continue
		}
		if ie.Field != "name" || !strings.Contains(ie.Msg, tc.want) {
			t.Errorf("ValidName(%q) = field %q, %q; want field name, message containing %q", tc.name, ie.Field, ie.Msg, tc.want)
		}
		if len(ie.Msg) > 300 {
			t.Errorf("ValidName(%q): message is %d bytes long", tc.name, len(ie.Msg))
		}
	}
}

func TestValidNameMessage(t *testing.T) {
	want := `voice name "a/b" is invalid: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`
	if err := ValidName("a/b"); err == nil || err.Error() != want {
		t.Errorf("ValidName(\"a/b\") = %v\nwant %s", err, want)
	}
}
