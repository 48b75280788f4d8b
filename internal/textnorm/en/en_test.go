package en

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestUpstreamNormalizerCases are the full-pipeline expectations of
// upstream's tn/english/test/normalizer_test.py (mapping and tie tests).
func TestUpstreamNormalizerCases(t *testing.T) {
	n := New()
	tests := []struct{ in, want string }{
		{"I have 23 apples", "I have twenty three apples"},
		{"Hello, world!", "Hello, world!"},
		{"number 256", "number two hundred and fifty six"},
		{"before number 256 after", "before number two hundred and fifty six after"},
		{"23", "twenty three"},
		{"2024-05-06", "the sixth of may twenty twenty four"},
		{"03:43 p.m.", "three forty three PM"},
		{"$12.05", "twelve point oh five dollars"},
		{"$1.00", "one dollar"},
		{"$1.2000", "one point two dollars"},
		{"31.990 billion", "thirty one point nine nine oh billion"},
		{"3/4", "three quarters"},
		{"1,000", "thousand"},
		{"¾", "three quarters"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := n.Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// test_full_normalizer_electronic_nbest_has_canonical_whitespace
	for _, in := range []string{"cdf1@abc.edu", "http://www.abc.com"} {
		got := n.Normalize(in)
		if got == "" || got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Errorf("Normalize(%q) = %q: want non-empty, trimmed, single-spaced", in, got)
		}
	}
}

// TestBehaviour pins readings derived from the upstream grammars beyond the
// golden files (weights decide: e.g. a year beats a cardinal, a grouped
// punctuation run beats a decimal point).
func TestBehaviour(t *testing.T) {
	n := New()
	tests := []struct{ in, want string }{
		{"Dr. Smith paid $5.50 for 3 apples on Jan 3rd, 2020.", "doctor Smith paid five point five dollars for three apples on the third of january, twenty twenty."},
		{"The meeting is at 10:30am on Monday, March 5th.", "The meeting is at ten thirty AM on Monday, the fifth of march."},
		{"It costs €20 or £15.99, roughly 50% of the price.", "It costs twenty euros or fifteen point nine nine pounds, roughly fifty percent of the price."},
		{"Call me at (555) 123-4567 or email john.doe@example.com.", "Call me at five five five, one two three, four five six seven or email john dot doe at example dot com."},
		{"The temperature was -5°C at 7 p.m.", "The temperature was negative five degrees Celsius at seven PM"},
		{"In 1999, the U.S.A. had 270 million people.", "In nineteen ninety nine, the USA had two hundred and seventy million people."},
		{"She ran 5km in 25 minutes.", "She ran five kilometers in twenty five minutes."},
		{"I was born on 12/25/1990.", "I was born on the twenty fifth of december nineteen ninety."},
		{"The 2nd, 3rd and 4th places", "The second, third and fourth places"},
		{"about $2M.", "about two million dollars."},
		{"in the 1990s", "in the nineteen nineties"},
		{"We need 2-3 days.", "We need two to three days."},
		{"He scored 99.9%.", "He scored ninety nine point nine percent."},
		{"5 + 3 = 8", "five plus three equals eight"},
		{"60 km/h", "sixty kilometers per hour"},
		{"IP is 192.168.0.1", "IP is one nine two dot one six eight dot zero dot one"},
		{"007", "oh oh seven"},
		{"1 1/2 cups", "one and a half cups"},
		{"1905", "nineteen oh five"},
		{"2000", "two thousand"},
		{"Mon-Fri", "Monday to Friday"},
		{"10am-2pm", "ten AM to two PM"},
		{"A&B", "A and B"},
		{"x^2", "x squared"},
		{"COVID-19", "COVID-nineteen"},
		{"  trailing spaces   ", "trailing spaces"},
		{"Wait... what?!", "Wait... what?!"},
		{"#1", "hash one"}, // upstream has no path here and raises
		{"a  b", "a b"},    // upstream has no path for two spaces and raises
		{"中文 text", "中文 text"},
	}
	for _, tt := range tests {
		if got := n.Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q)\n got: %q\nwant: %q", tt.in, got, tt.want)
		}
	}
}

// TestPathological checks that huge digit and punctuation runs finish and
// keep their shape (run time is covered by the benchmarks).
func TestPathological(t *testing.T) {
	n := New()
	size := 10000 // characters; the race detector makes 100k slow
	if os.Getenv("NANOVOX_LONG_TESTS") != "" {
		size = 100000
	}
	digits := strings.Repeat("1234567890", size/10)
	out := n.Normalize(digits)
	if !strings.HasPrefix(out, "one two three") || strings.Count(out, " ")+1 != len(digits) {
		t.Errorf("100k digits: got %d words starting %.40q", strings.Count(out, " ")+1, out)
	}
	for _, in := range []string{
		strings.Repeat(".", size),
		strings.Repeat("!?", size/2),
		strings.Repeat("<", size/2),
		strings.Repeat("<a", size/2),
		strings.Repeat("a.", size/2),
		strings.Repeat("1.", size/2),
		strings.Repeat("1-", size/2),
		strings.Repeat("1,000,", size/5),
		strings.Repeat(" ", size),
		strings.Repeat("ab", size/2),
		strings.Repeat("a ", size/2),
	} {
		out := n.Normalize(in)
		if !utf8.ValidString(out) || len(out) > 16*len(in)+64 {
			t.Errorf("%.10q...: output of %d bytes", in, len(out))
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"", " ", "$12.05", "2024-05-06", "03:43 p.m.", "cdf1@abc.edu", "+1 123-123-5678-1",
		"1-800-GO-U-HAUL", "¾", "<p>", "</p>", "\"\"", "'70s", "-.5kg", "\xff\xfe", "1,000,000",
		"2788 San Tomas Expy, Santa Clara, CA 95051", "http://www.abc.com", "x^2", "~5",
		strings.Repeat("9", 40), "a\u00a0b", "\t\n", "World War II.",
	} {
		f.Add(s)
	}
	n := New()
	f.Fuzz(func(t *testing.T, s string) {
		out := n.Normalize(s)
		if !utf8.ValidString(out) {
			if utf8.ValidString(s) {
				t.Fatalf("Normalize(%q) = %q: invalid UTF-8", s, out)
			}
		}
		// Each input rune becomes at most a few words ("7" -> "seven",
		// "%" -> "percent", a unit -> "square centimeters").
		if len(out) > 24*len(s)+32 {
			t.Fatalf("Normalize(%q) = %d bytes from %d", s, len(out), len(s))
		}
		if again := n.Normalize(s); again != out {
			t.Fatalf("Normalize(%q) not deterministic: %q then %q", s, out, again)
		}
	})
}

func BenchmarkSentence(b *testing.B) {
	n := New()
	s := "Dr. Smith paid $5.50 for 3 apples on Jan 3rd, 2020 at 10:30am."
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		n.Normalize(s)
	}
}

func Benchmark4kB(b *testing.B) {
	n := New()
	para := "The National Map, accessed April 1, 2011. In 1999, the U.S.A. had 270 million people; " +
		"she ran 5km in 25 minutes and paid $12.05 (about €11) at 03:43 p.m. Call +1 123-123-5678. "
	var sb strings.Builder
	for sb.Len() < 4096 {
		sb.WriteString(para)
	}
	s := sb.String()[:4096]
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		n.Normalize(s)
	}
}

// BenchmarkPathological shows linear time: compare the 10k and 100k
// variants of each input.
func BenchmarkPathological(b *testing.B) {
	n := New()
	for _, size := range []int{10000, 100000} {
		for _, unit := range []string{"1234567890", ".", "!?", "a.", "1-", "1,000,", "<a", "a "} {
			s := strings.Repeat(unit, size/len(unit))
			b.Run(fmt.Sprintf("%q/%d", unit, size), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					n.Normalize(s)
				}
			})
		}
	}
}

func BenchmarkDigits100k(b *testing.B) {
	n := New()
	s := strings.Repeat("1234567890", 10000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		n.Normalize(s)
	}
}

func BenchmarkLoadTables(b *testing.B) {
	for b.Loop() {
		if _, err := loadTables(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestASCIIPunctTable keeps the fast ASCII table in step with the rule.
func TestASCIIPunctTable(t *testing.T) {
	n := New()
	for r := rune(0); r < 0x80; r++ {
		if n.isPunct(r) != n.isPunctSlow(r) {
			t.Errorf("isPunct(%q) = %v, slow path says %v", r, n.isPunct(r), n.isPunctSlow(r))
		}
	}
}

// TestConcurrent exercises the shared tables and pooled matchers from
// several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	n := New()
	in := "Dr. Smith paid $5.50 for 3 apples on Jan 3rd, 2020 at 10:30am."
	want := n.Normalize(in)
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func() {
			var got string
			for i := 0; i < 50; i++ {
				got = n.Normalize(in)
				if got != want {
					break
				}
			}
			done <- got
		}()
	}
	for g := 0; g < 4; g++ {
		if got := <-done; got != want {
			t.Errorf("concurrent Normalize = %q, want %q", got, want)
		}
	}
	if New() != n {
		t.Error("New returned a different normalizer")
	}
}

// TestSerialOK keeps the cheap acceptance test in step with serial.
func TestSerialOK(t *testing.T) {
	n := New()
	for _, s := range []string{
		"A-123", "B52", "mp3", "21st", "2nd", "a/b", "1-2-3", "1/2/3", "1-2", "COVID-19", "x^2", "#1", "A#",
		"20-year-old", "--", "a--1", "1-", "-1", "H2O", "1e10", "ab", "12", "A/1", "1st1", "2ND", "a-b-c",
		"1-2-3-4", "%5", "5%", "1/a", "a1/b2",
	} {
		m := newMatcher(n, []rune(s))
		_, want := m.serial(m.rs)
		if got := m.serialOK(m.rs); got != want {
			t.Errorf("serialOK(%q) = %v, serial says %v", s, got, want)
		}
		m.release()
	}
}
