package hub

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgressBar(&buf)
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	step := func(d time.Duration, file string, done, total int64) {
		now = now.Add(d)
		p.Update(file, done, total)
	}
	step(0, "model.safetensors", 0, 4_000_000)
	step(10*time.Millisecond, "model.safetensors", 100, 4_000_000)       // throttled
	step(time.Second, "model.safetensors", 2_000_000, 4_000_000)         // drawn
	step(10*time.Millisecond, "model.safetensors", 4_000_000, 4_000_000) // final: always drawn
	step(0, "config.json", 0, 50)                                        // new file
	step(time.Second, "config.json", 50, 50)                             // final
	step(0, "config.json", 0, 50)                                        // same name again: a new transfer
	step(0, "a-very-long-directory-name/and-a-long-file-name.safetensors", 10, -1)
	out := buf.String()
	lines := strings.Split(out, "\n")
	for _, want := range []string{
		"  0% [>                       ] 0 B / 4.0 MB",
		" 50% [============>           ] 2.0 MB / 4.0 MB  2.0 MB/s",
		"100% [========================] 4.0 MB / 4.0 MB",
		"config.json                    0% [>",
		"100% [========================] 50 B / 50 B  50 B/s",
		"…-long-file-name.safetensors 10 B",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "100 B") {
		t.Errorf("throttled update was drawn:\n%s", out)
	}
	// One newline after each finished file and before each new one; the last line stays open.
	if n := strings.Count(out, "\n"); n != 3 || strings.HasSuffix(out, "\n") {
		t.Errorf("%d newlines, want 3 and an open last line:\n%q", n, out)
	}
	p.Finish()
	p.Finish()
	if out := buf.String(); !strings.HasSuffix(out, "10 B\n") {
		t.Errorf("Finish did not end the open line once: %q", out[len(out)-10:])
	}
	for _, l := range lines {
		for _, seg := range strings.Split(l, "\r") {
			if seg != "" && !strings.Contains(seg, "B") {
				t.Errorf("odd segment %q", seg)
			}
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 1_500_000: "1.5 MB", 3_200_000_000: "3.2 GB", 5e12: "5.0 TB", 7e15: "7000.0 TB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
