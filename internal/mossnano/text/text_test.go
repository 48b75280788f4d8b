package text

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// byteTokenizer counts one token per UTF-8 byte of every non-space
// character, so counts are monotone in the prefix and additive over joins.
type byteTokenizer struct{}

func (byteTokenizer) Encode(s string) []int {
	var ids []int
	for _, r := range s {
		if !isSpace(r) {
			for i := 0; i < utf8.RuneLen(r); i++ {
				ids = append(ids, int(r))
			}
		}
	}
	return ids
}

func TestPythonPredicates(t *testing.T) {
	// Expected values are CPython 3.12's.
	tests := []struct {
		r                   rune
		space, upper, alnum bool
		upperS              string
	}{
		{' ', true, false, false, " "},
		{'\x1c', true, false, false, "\x1c"},
		{'\x1f', true, false, false, "\x1f"},
		{'\u0085', true, false, false, "\u0085"},
		{'\u00a0', true, false, false, "\u00a0"},
		{'\u200b', false, false, false, "\u200b"},
		{'\u3000', true, false, false, "\u3000"},
		{'\u180e', false, false, false, "\u180e"},
		{'A', false, true, true, "A"},
		{'a', false, false, true, "A"},
		{'ǅ', false, false, true, "Ǆ"}, // title case: neither upper nor lower
		{'Ⓐ', false, true, false, "Ⓐ"}, // So with Other_Uppercase
		{'ⓐ', false, false, false, "Ⓐ"},
		{'Ⅻ', false, true, true, "Ⅻ"}, // Nl, Other_Uppercase
		{'ß', false, false, true, "SS"},
		{'ﬁ', false, false, true, "FI"},
		{'ŉ', false, false, true, "ʼN"},
		{'ᾳ', false, false, true, "ΑΙ"},
		{'ı', false, false, true, "I"},
		{'²', false, false, true, "²"},
		{'½', false, false, true, "½"},
		{'〇', false, false, true, "〇"},
		{'中', false, false, true, "中"},
		{'٣', false, false, true, "٣"},
		{'_', false, false, false, "_"},
		{'😀', false, false, false, "😀"},
	}
	for _, tc := range tests {
		if got := isSpace(tc.r); got != tc.space {
			t.Errorf("isSpace(%U) = %v", tc.r, got)
		}
		if got := isUpper(tc.r); got != tc.upper {
			t.Errorf("isUpper(%U) = %v", tc.r, got)
		}
		if got := isAlnum(tc.r); got != tc.alnum {
			t.Errorf("isAlnum(%U) = %v", tc.r, got)
		}
		if got := string(upper(tc.r)); got != tc.upperS {
			t.Errorf("upper(%U) = %q, want %q", tc.r, got, tc.upperS)
		}
	}
}

func TestPrepare(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hi", "        Hi."},
		{"Hello there, how are you today", "Hello there, how are you today."},
		{"one two three four five", "One two three four five."},
		{"one two three four", "        One two three four."},
		{"  padded\ttext  ", "        Padded\ttext."},
		{"new\nline\r\nend", "        New line end."},
		{"a  b   c", "        A b c."},
		{"ǅemal", "        Ǆemal."},
		{"ßtraße", "        SStraße."},
		{"done!", "        Done!"},
		{"ends with ½", "        Ends with ½."},
		{"ends with …", "        Ends with …"},
		{"你好", "你好。"},
		{"你好！", "你好！"},
		{"mixed 中文 text", "mixed 中文 text。"},
		{"1 2 3", "        1 2 3."},
		{"\x1cx\x1f", "        X."},
	}
	for _, tc := range tests {
		if got := string(prepare(tc.in)); got != tc.want {
			t.Errorf("prepare(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitByPunctuation(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"no punctuation", []string{"no punctuation"}},
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{`"Quoted." Next.`, []string{`"Quoted."`, "Next."}},
		{"Wait!)] then", []string{"Wait!)]", "then"}},
		{"a.\u3000 \tb", []string{"a.", "b"}},
		{"你好。世界！", []string{"你好。", "世界！"}},
		{"...", []string{".", ".", "."}},
		{"   .  ", []string{"."}},
		{"x;y；z", []string{"x;", "y；", "z"}},
	}
	for _, tc := range tests {
		var got []string
		for _, s := range splitByPunctuation([]rune(tc.in), sentenceEnd) {
			got = append(got, string(s))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("splitByPunctuation(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitByteTokenizer(t *testing.T) {
	tests := []struct {
		text   string
		budget int
		want   []string
	}{
		{"hi", 75, []string{"hi"}},
		{"Short one. Another short one.", 0, []string{"Short one. Another short one."}},
		{"Short one. Another short one.", 100, []string{"Short one. Another short one."}},
		{"Short one. Another short one.", 16, []string{"Short one.", "Another short one."}},
		{"Short one. Another short one.", 12, []string{"Short one.", "Another short", "one."}},
		{"Alpha beta, gamma delta. Epsilon.", 12, []string{"Alpha beta,", "gamma delta.", "Epsilon."}},
		// Budget cut: the longest fitting prefix, cut back to the last space.
		{"aaaa bbbb cccc dddd", 9, []string{"Aaaa bbbb", "cccc dddd."}},
		// Upstream scans the last 24 characters (not 25) for a boundary.
		{"aaaaaa " + strings.Repeat("b", 40), 30, []string{"Aaaaaa " + strings.Repeat("b", 24), strings.Repeat("b", 16) + "."}},
		{"aaaaaaa " + strings.Repeat("b", 40), 30, []string{"Aaaaaaa", strings.Repeat("b", 30), strings.Repeat("b", 10) + "."}},
		// No boundary in the last 24 characters: a cut inside the word.
		{strings.Repeat("x", 30), 10, []string{"Xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx", "."}},
		// CJK pieces join without a space.
		{"你好。世界。再见。", 18, []string{"你好。世界。", "再见。"}},
		// A character costing more than the budget stands alone.
		{"😀😀 ok", 3, []string{"😀", "😀", "ok."}},
	}
	for _, tc := range tests {
		chunks, err := Split(byteTokenizer{}, tc.text, tc.budget)
		if err != nil {
			t.Errorf("Split(%q, %d): %v", tc.text, tc.budget, err)
			continue
		}
		var got []string
		for _, c := range chunks {
			got = append(got, c.Text)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q, %d) = %q, want %q", tc.text, tc.budget, got, tc.want)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		want error
	}{
		{"", ErrEmpty},
		{" \t\n\u3000\x1c", ErrEmpty},
		{"ok \xff", ErrInvalidUTF8},
	} {
		for _, budget := range []int{0, 75} {
			if _, err := Split(byteTokenizer{}, tc.text, budget); !errors.Is(err, tc.want) {
				t.Errorf("Split(%q, %d) error = %v, want %v", tc.text, budget, err, tc.want)
			}
		}
	}
}

func TestPauses(t *testing.T) {
	chunks, err := Split(byteTokenizer{}, "One two three four five six. Seven eight. Nine ten eleven twelve thirteen.", 30)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, c := range chunks {
		got = append(got, c.PauseAfter)
	}
	if want := []float64{PauseLong, PauseShort, 0}; !slices.Equal(got, want) {
		t.Errorf("pauses %v, want %v (chunks %+v)", got, want, chunks)
	}
}
