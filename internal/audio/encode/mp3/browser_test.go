package mp3

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChromiumDecodes checks that a browser's decoder (Chromium's Web Audio
// decodeAudioData) accepts the streams, including two concatenated bodies,
// and decodes them to the expected length and level. It needs chromium and
// runs only with NANOVOX_LONG_TESTS.
func TestChromiumDecodes(t *testing.T) {
	if !longTests(t) {
		t.Skip("long test; set NANOVOX_LONG_TESTS=1")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not found")
	}
	x, rate, _ := readWAV(t, speechFile)
	type stream struct {
		name     string
		rate, ch int
		data     []byte
		len      int // samples per channel
		rms      float64
	}
	var streams []stream
	add := func(name string, rate, ch int, data []byte, frameLen int, in []float32) {
		var e float64
		for _, v := range in {
			e += float64(v) * float64(v)
		}
		n := len(frames(t, data)) * frameLen
		streams = append(streams, stream{name, rate, ch, data, n, math.Sqrt(e / float64(n*ch))})
	}
	add("48k mono", rate, 1, encode(t, x, rate, 1, 0, 4800), 1152, x)
	st := speech(t, 44100, 2)
	add("44.1k stereo", 44100, 2, encode(t, st, 44100, 2, 0, 4800), 1152, st)
	lsf := speech(t, 22050, 1)
	add("22.05k mono", 22050, 1, encode(t, lsf, 22050, 1, 32000, 4800), 576, lsf)
	add("empty", rate, 1, encode(t, nil, rate, 1, 0, 0), 1152, nil)
	a, b := encode(t, x[:rate], rate, 1, 0, 0), encode(t, x[rate:], rate, 1, 0, 0)
	add("concatenated", rate, 1, append(a, b...), 1152, x)

	var js strings.Builder
	for i, s := range streams {
		fmt.Fprintf(&js, "[%d,%d,%q],", i, s.rate, base64.StdEncoding.EncodeToString(s.data))
	}
	page := `<script>
(async () => {
  const out = [];
  for (const [i, rate, b64] of [` + js.String() + `]) {
    const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
    try {
      const buf = await new OfflineAudioContext(1, 1, rate).decodeAudioData(bytes.buffer);
      let e = 0;
      for (let c = 0; c < buf.numberOfChannels; c++) {
        for (const v of buf.getChannelData(c)) e += v * v;
      }
      out.push(i + " ok " + buf.numberOfChannels + " " + buf.length + " " + Math.sqrt(e / buf.length / buf.numberOfChannels));
    } catch (err) {
      out.push(i + " error " + err);
    }
  }
  console.log("RESULT " + out.join(";"));
})();
</script>`
	dir := t.TempDir()
	html := filepath.Join(dir, "decode.html")
	if err := os.WriteFile(html, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	// The profile is not in t.TempDir: Chromium's helper processes outlive
	// the killed browser for a moment and may still write there when the
	// test's own cleanup runs. It is removed once they are gone.
	profile, err := os.MkdirTemp("", "nanovox-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer removeWhenFree(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+profile, "--enable-logging=stderr", "--v=0",
		"file://"+html)
	// Chromium keeps running after the script; stop it once the result is in.
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	re := regexp.MustCompile(`RESULT ([^"]*)`)
	var result string
	buf := make([]byte, 0, 1<<16)
	chunk := make([]byte, 4096)
	for result == "" {
		n, err := stderr.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if m := re.FindSubmatch(buf); m != nil {
			result = string(m[1])
		}
		if err != nil {
			t.Fatalf("chromium exited without a result: %v\n%s", err, buf)
		}
	}
	for _, line := range strings.Split(result, ";") {
		f := strings.Fields(line)
		i, _ := strconv.Atoi(f[0])
		s := streams[i]
		if f[1] != "ok" {
			t.Errorf("%s: chromium: %s", s.name, strings.Join(f[1:], " "))
			continue
		}
		ch, _ := strconv.Atoi(f[2])
		n, _ := strconv.Atoi(f[3])
		rms, _ := strconv.ParseFloat(f[4], 64)
		t.Logf("%s: %d channels, %d samples, rms %.4f (input %.4f)", s.name, ch, n, rms, s.rms)
		if ch != s.ch || n != s.len {
			t.Errorf("%s: chromium decoded %d channels × %d samples, want %d × %d", s.name, ch, n, s.ch, s.len)
		}
		if s.rms == 0 {
			if rms != 0 {
				t.Errorf("%s: silence decodes with rms %g", s.name, rms)
			}
		} else if d := 20 * math.Log10(rms/s.rms); math.Abs(d) > 0.5 {
			t.Errorf("%s: chromium's decode is %+.2f dB off the input level", s.name, d)
		}
	}
}

// removeWhenFree removes dir, retrying for a few seconds while processes
// that are exiting still create files in it; what is left after that stays
// in the system's temporary directory.
func removeWhenFree(dir string) {
	for range 50 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
