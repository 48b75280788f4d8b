package voice

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nanovox/nanovox/internal/flock"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openT opens a store and fails on any error or warning.
func openT(t *testing.T, dir string, o Options) *Store {
	t.Helper()
	s, w, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) > 0 {
		t.Fatalf("Open warnings: %v", w)
	}
	return s
}

func addT(t *testing.T, s *Store, v Voice, replace bool) *Voice {
	t.Helper()
	old, err := s.Add(v, replace)
	if err != nil {
		t.Fatalf("Add(%q): %v", v.Name, err)
	}
	return old
}

// changeLog records OnChange calls.
type changeLog struct {
	mu    sync.Mutex
	calls []string
}

func (c *changeLog) hook(name, oldKey string) {
	c.mu.Lock()
	c.calls = append(c.calls, name+" "+oldKey)
	c.mu.Unlock()
}

func (c *changeLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.calls
	c.calls = nil
	return calls
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	if got := s.List(); len(got) != 0 {
		t.Fatalf("new store lists %d voices", len(got))
	}
	if _, err := os.Stat(filepath.Join(dir, "voices")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created the voices directory: %v", err)
	}
	in := []Voice{testVoice("zed", 375, 16, 1), testVoice("alice", 1, 16, 2), testVoice("Bob.v2", 40, 8, 3)}
	in[1].RefText = ""
	in[1].SourceFormat = ""
	for _, v := range in {
		if old := addT(t, s, v, false); old != nil {
			t.Errorf("Add(%q) returned old voice %v", v.Name, old.Name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "voices", "zed.voice")); err != nil {
		t.Fatal(err)
	}

	s2 := openT(t, dir, Options{Model: testModel})
	for _, v := range in {
		a, err := s.Get(v.Name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s2.Get(v.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a.Key, v.Name+"@") || len(a.Key) != len(v.Name)+17 {
			t.Errorf("key %q", a.Key)
		}
		want := v
		want.Key = a.Key
		if d := cmp.Diff(&want, a); d != "" {
			t.Errorf("Get after Add (-want +got):\n%s", d)
		}
		if d := cmp.Diff(&want, b); d != "" {
			t.Errorf("Get after reopen (-want +got):\n%s", d)
		}
	}
	var names []string
	for _, v := range s2.List() {
		names = append(names, v.Name)
	}
	if want := []string{"Bob.v2", "alice", "zed"}; !slices.Equal(names, want) {
		t.Errorf("List names %v, want %v", names, want)
	}
}

func TestAddDefaults(t *testing.T) {
	s := openT(t, t.TempDir(), Options{Model: testModel})
	v := testVoice("a", 3, 16, 0)
	v.Model = ""
	v.Created = time.Time{}
	v.Key = "ignored"
	before := time.Now()
	addT(t, s, v, false)
	got, err := s.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != testModel {
		t.Errorf("Model %q, want the store's %q", got.Model, testModel)
	}
	if got.Created.Location() != time.UTC || got.Created.Before(before.Add(-time.Second)) || got.Created.After(time.Now().Add(time.Second)) {
		t.Errorf("Created %v, want now in UTC", got.Created)
	}
	if got.Key == "ignored" {
		t.Error("Add kept the caller's key")
	}
	// A store without a model needs the voice to name one.
	s2 := openT(t, t.TempDir(), Options{})
	_, err = s2.Add(v, false)
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Field != "model" {
		t.Errorf("Add without any model = %v, want *InvalidError on model", err)
	}
}

func TestAddCopiesCodes(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	v := testVoice("a", 4, 16, 0)
	addT(t, s, v, false)
	v.Codes[0][0] = 999
	got, _ := s.Get("a")
	if got.Codes[0][0] == 999 {
		t.Fatal("the store shares the caller's codes")
	}
	for i, row := range got.Codes {
		if cap(row) != len(row) {
			t.Fatalf("row %d has spare capacity %d", i, cap(row)-len(row))
		}
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	var log changeLog
	s := openT(t, dir, Options{OnChange: log.hook})
	addT(t, s, testVoice("v", 10, 16, 1), false)
	first, _ := s.Get("v")

	_, err := s.Add(testVoice("v", 10, 16, 2), false)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), `voice "v" already exists`) {
		t.Fatalf("Add existing = %v, want ErrExists", err)
	}
	if got, _ := s.Get("v"); got != first {
		t.Fatal("failed Add changed the voice")
	}
	if calls := log.take(); len(calls) != 0 {
		t.Errorf("OnChange after failed Add: %v", calls)
	}

	old := addT(t, s, testVoice("v", 12, 16, 2), true)
	if old != first {
		t.Errorf("replace returned %v, want the first voice", old)
	}
	second, _ := s.Get("v")
	if second.Key == first.Key {
		t.Errorf("replace kept key %q", first.Key)
	}
	if second.Frames() != 12 || first.Frames() != 10 || first.Codes[0][0] != testVoice("v", 1, 16, 1).Codes[0][0] {
		t.Error("the held snapshot changed with the replace")
	}
	if calls, want := log.take(), []string{"v " + first.Key}; !slices.Equal(calls, want) {
		t.Errorf("OnChange calls %v, want %v", calls, want)
	}

	// The same content saved again at the same time has the same key; a
	// fresh save (new created time) does not.
	s2 := openT(t, dir, Options{})
	if got, _ := s2.Get("v"); got.Key != second.Key {
		t.Errorf("key after reopen %q, want %q", got.Key, second.Key)
	}
}

func TestCaseCollision(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	addT(t, s, testVoice("Bob", 2, 16, 1), false)
	for _, replace := range []bool{false, true} {
		_, err := s.Add(testVoice("bob", 2, 16, 2), replace)
		if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), `"Bob"`) {
			t.Errorf("Add(bob, replace=%v) = %v; want ErrExists naming Bob", replace, err)
		}
	}
	if _, err := s.Get("bob"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(bob) = %v, want ErrNotFound (names are case-sensitive)", err)
	}
}

func TestDelete(t *testing.T) {
	dir := t.TempDir()
	var log changeLog
	s := openT(t, dir, Options{OnChange: log.hook})
	addT(t, s, testVoice("a", 3, 16, 1), false)
	addT(t, s, testVoice("b", 3, 16, 2), false)
	a, _ := s.Get("a")

	old, err := s.Delete("a")
	if err != nil || old != a {
		t.Fatalf("Delete = %v, %v; want the voice", old, err)
	}
	if calls, want := log.take(), []string{"a " + a.Key}; !slices.Equal(calls, want) {
		t.Errorf("OnChange %v, want %v", calls, want)
	}
	if _, err := s.Get("a"); !errors.Is(err, ErrNotFound) || err.Error() != `no saved voice named "a"` {
		t.Errorf("Get deleted = %v", err)
	}
	if a.Frames() != 3 {
		t.Error("held snapshot changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "voices", "a.voice")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file still there: %v", err)
	}
	if _, err := s.Delete("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete twice = %v, want ErrNotFound", err)
	}
	if _, err := s.Delete("a/b"); !isInvalid(err, "name") {
		t.Errorf("Delete(a/b) = %v, want *InvalidError", err)
	}
	if got := s.List(); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("List after delete: %v", got)
	}
	s2 := openT(t, dir, Options{})
	if got := s2.List(); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("List after reopen: %v", got)
	}
	// A store whose directory does not exist yet.
	s3 := openT(t, filepath.Join(dir, "new"), Options{})
	if _, err := s3.Delete("x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete in missing dir = %v, want ErrNotFound", err)
	}
}

func TestDeleteCorruptFile(t *testing.T) {
	dir := t.TempDir()
	vdir := filepath.Join(dir, "voices")
	os.MkdirAll(vdir, 0o755)
	os.WriteFile(filepath.Join(vdir, "bad.voice"), []byte("garbage"), 0o644)
	s, w, err := Open(dir, Options{})
	if err != nil || len(w) != 1 {
		t.Fatalf("Open = %v, %v", w, err)
	}
	if _, err := s.Add(testVoice("bad", 2, 16, 0), false); !errors.Is(err, ErrExists) {
		t.Errorf("Add over a corrupt file = %v, want ErrExists", err)
	}
	old, err := s.Delete("bad")
	if err != nil || old != nil {
		t.Fatalf("Delete corrupt = %v, %v; want nil, nil", old, err)
	}
	if _, err := os.Stat(filepath.Join(vdir, "bad.voice")); !errors.Is(err, os.ErrNotExist) {
		t.Error("corrupt file not removed")
	}
}

func isInvalid(err error, field string) bool {
	var ie *InvalidError
	return errors.As(err, &ie) && ie.Field == field
}

func TestAddInvalid(t *testing.T) {
	type tc struct {
		name  string
		opts  Options
		edit  func(*Voice)
		field string
		msg   string
	}
	ragged := func(v *Voice) { v.Codes[2] = v.Codes[2][:15] }
	tests := []tc{
		{"bad name", Options{}, func(v *Voice) { v.Name = "a/b" }, "name", "letters"},
		{"reserved name", Options{}, func(v *Voice) { v.Name = "NUL" }, "name", "reserved"},
		{"no codes", Options{}, func(v *Voice) { v.Codes = nil }, "codes", "no codes"},
		{"empty frames", Options{}, func(v *Voice) { v.Codes = [][]int{{}, {}} }, "codes", "0 codes per frame"},
		{"ragged", Options{}, ragged, "codes", "frame 2 has 15 codes"},
		{"negative code", Options{}, func(v *Voice) { v.Codes[1][3] = -1 }, "codes", "frame 1 codebook 3 has code -1"},
		{"code over uint16", Options{}, func(v *Voice) { v.Codes[0][0] = 65536 }, "codes", "65536"},
		{"code over codebook", Options{CodebookSize: 1024}, func(v *Voice) { v.Codes[4][15] = 1024 }, "codes", "outside [0, 1024)"},
		{"wrong codebooks", Options{NumCodebooks: 8}, func(*Voice) {}, "codes", "the codec uses 8"},
		{"too many codebooks", Options{}, func(v *Voice) { v.Codes = [][]int{make([]int, 65)} }, "codes", "1-64"},
		{"too many frames", Options{MaxFrames: 4}, func(*Voice) {}, "codes", "5 frames; the limit is 4"},
		{"over default frames", Options{}, func(v *Voice) { *v = testVoice("long", DefaultMaxFrames+1, 16, 0) }, "codes", "the limit is 400"},
		{"other model", Options{Model: "other/8x512"}, func(*Voice) {}, "model", `"other/8x512"`},
		{"model with control", Options{}, func(v *Voice) { v.Model = "m\x00" }, "model", "printable"},
		{"long model", Options{}, func(v *Voice) { v.Model = strings.Repeat("m", 257) }, "model", "256 bytes"},
		{"year 10000", Options{}, func(v *Voice) { v.Created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "created", "years"},
		{"NaN duration", Options{}, func(v *Voice) { v.Duration = nanF() }, "source", "duration"},
		{"negative rate", Options{}, func(v *Voice) { v.SourceRate = -1 }, "source", "sample rate"},
		{"channels", Options{}, func(v *Voice) { v.SourceChannels = 5000 }, "source", "channel"},
		{"format", Options{}, func(v *Voice) { v.SourceFormat = "wav\n" }, "source", "format"},
		{"long ref_text", Options{}, func(v *Voice) { v.RefText = strings.Repeat("x", 4097) }, "ref_text", "4097 bytes"},
		{"bad utf-8 ref_text", Options{}, func(v *Voice) { v.RefText = "a\xffb" }, "ref_text", "UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir, tc.opts)
			v := testVoice("v", 5, 16, 1)
			tc.edit(&v)
			old, err := s.Add(v, true)
			var ie *InvalidError
			if !errors.As(err, &ie) || old != nil {
				t.Fatalf("Add = %v, %v; want *InvalidError", old, err)
			}
			if ie.Field != tc.field || !strings.Contains(ie.Msg, tc.msg) {
				t.Errorf("Add: field %q %q; want %q containing %q", ie.Field, ie.Msg, tc.field, tc.msg)
			}
			if len(s.List()) != 0 {
				t.Error("invalid voice was stored")
			}
			if _, err := os.Stat(filepath.Join(dir, "voices")); !errors.Is(err, os.ErrNotExist) {
				t.Error("invalid Add touched the disk")
			}
		})
	}
}

func nanF() float64 { z := 0.0; return z / z }

func TestGetChecksCodec(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	v := testVoice("old", 3, 8, 1)
	v.Model = "other-codec/8x2048"
	v.Codes[1][1] = 2000
	addT(t, s, v, false)
	addT(t, s, testVoice("good", 3, 16, 2), false)

	tests := []struct {
		opts  Options
		field string
		msg   string
	}{
		{Options{Model: testModel}, "model", `voice "old" was saved for codec "other-codec/8x2048", but this model uses "moss-audio-tokenizer-nano/16x1024"`},
		{Options{NumCodebooks: 16}, "codes", "8 codes per frame, but the codec uses 16"},
		{Options{CodebookSize: 1024}, "codes", "code 2000"},
	}
	for _, tc := range tests {
		s2 := openT(t, dir, tc.opts)
		if len(s2.List()) != 2 {
			t.Errorf("%+v: List does not show both voices", tc.opts)
		}
		_, err := s2.Get("old")
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Msg, tc.msg) {
			t.Errorf("%+v: Get = %v; want %s error containing %q", tc.opts, err, tc.field, tc.msg)
		}
		if _, err := s2.Get("good"); err != nil {
			t.Errorf("%+v: Get(good) = %v", tc.opts, err)
		}
		if _, err := s2.Delete("old"); err != nil {
			t.Errorf("%+v: Delete foreign voice: %v", tc.opts, err)
		}
		addT(t, s, v, true) // put it back for the next case
	}
	if _, err := s.Get("a b"); !isInvalid(err, "name") {
		t.Errorf("Get(bad name) = %v, want *InvalidError", err)
	}
	if _, err := s.Get("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
}

func TestLimit(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{MaxVoices: 2})
	addT(t, s, testVoice("a", 2, 16, 1), false)
	addT(t, s, testVoice("b", 2, 16, 2), false)
	_, err := s.Add(testVoice("c", 2, 16, 3), false)
	var le *LimitError
	if !errors.Is(err, ErrLimit) || !errors.As(err, &le) || le.Max != 2 || le.Name != "c" {
		t.Fatalf("Add beyond limit = %v, want *LimitError", err)
	}
	if errors.Is(err, ErrExists) || isInvalid(err, "codes") {
		t.Error("limit error matches other kinds")
	}
	if !strings.Contains(err.Error(), "delete one first") {
		t.Errorf("message %q", err)
	}
	addT(t, s, testVoice("a", 3, 16, 4), true) // replacing is not adding
	if _, err := s.Delete("a"); err != nil {
		t.Fatal(err)
	}
	addT(t, s, testVoice("c", 2, 16, 3), false)

	// Another process's voices count, and a store over its limit loads only
	// MaxVoices of them.
	big := openT(t, dir, Options{})
	addT(t, big, testVoice("d", 2, 16, 5), false)
	if _, err := s.Add(testVoice("e", 2, 16, 6), false); !errors.Is(err, ErrLimit) {
		t.Errorf("Add with 3 files on disk = %v, want ErrLimit", err)
	}
	s3, w, err := Open(dir, Options{MaxVoices: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(s3.List()) != 2 || len(w) != 1 || !strings.Contains(w[0].String(), "d.voice") {
		t.Errorf("over-full dir: %d voices, warnings %v", len(s3.List()), w)
	}
}

// writeRaw puts a file into the voices directory of dir.
func writeRaw(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	vdir := filepath.Join(dir, "voices")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vdir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSkipsBadFiles(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	for i, n := range []string{"good1", "good2", "model"} {
		addT(t, s, testVoice(n, 5+i, 16, i), false)
	}
	goodBytes, err := os.ReadFile(filepath.Join(dir, "voices", "good1.voice"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(goodBytes)
	flipped[len(flipped)-40] ^= 1
	future := bytes.Clone(goodBytes)
	binary.LittleEndian.PutUint32(future[8:], 2)
	hugeMeta := bytes.Clone(goodBytes)
	binary.LittleEndian.PutUint32(hugeMeta[12:], 0xFFFFFFF0)
	long := testVoice("long", 60, 16, 9)
	longBytes, _, _ := encodeFile(&long)
	other := testVoice("other", 5, 16, 9)
	otherBytes, _, _ := encodeFile(&other)

	bad := map[string][]byte{
		"truncated.voice":      goodBytes[:len(goodBytes)/2],
		"flipped.voice":        flipped,
		"magic.voice":          append([]byte("XXXXXXXX"), goodBytes[8:]...),
		"future.voice":         future,
		"hugemeta.voice":       hugeMeta,
		"empty.voice":          nil,
		"long.voice":           longBytes,  // over MaxFrames 50
		"renamed.voice":        otherBytes, // holds "other"
		"big.voice":            make([]byte, maxFileLen(50)+1),
		"bad name!.voice":      goodBytes,
		".voice":               goodBytes,
		"a..b.voice":           goodBytes,
		"notes.txt":            []byte("ignored"),
		"good1.voice.bak":      goodBytes,
		"README":               nil,
		".tmp-good1.voice.123": goodBytes[:10],
	}
	for n, b := range bad {
		writeRaw(t, dir, n, b)
	}
	os.Mkdir(filepath.Join(dir, "voices", "dir.voice"), 0o755)
	os.Mkdir(filepath.Join(dir, "voices", "subdir"), 0o755)
	if err := os.Symlink("good2.voice", filepath.Join(dir, "voices", "link.voice")); err != nil {
		t.Log("no symlinks:", err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "voices", "dangling.voice")); err != nil {
		t.Log("no symlinks:", err)
	}

	var logBuf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	s2, w, err := Open(dir, Options{MaxFrames: 50, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range s2.List() {
		names = append(names, v.Name)
	}
	if want := []string{"good1", "good2", "model"}; !slices.Equal(names, want) {
		t.Errorf("loaded %v, want %v", names, want)
	}
	wantWarn := map[string]string{
		"truncated.voice": "truncated",
		"flipped.voice":   "checksum",
		"magic.voice":     "not a nanovox voice file",
		"future.voice":    "newer than this nanovox",
		"hugemeta.voice":  "metadata length",
		"empty.voice":     "empty",
		"long.voice":      "60 frames, more than the limit of 50",
		"renamed.voice":   `holds voice "other"`,
		"big.voice":       "over the limit",
		"bad name!.voice": "not a valid voice name",
		".voice":          "not a valid voice name",
		"a..b.voice":      "not a valid voice name",
		"dir.voice":       "not a regular file",
		"link.voice":      "symbolic link", // links are not followed
		"dangling.voice":  "symbolic link",
	}
	got := map[string]string{}
	for _, x := range w {
		got[filepath.Base(x.Path)] = x.Err.Error()
		if !strings.Contains(x.String(), x.Path) {
			t.Errorf("Warning.String() %q lacks the path", x.String())
		}
	}
	for f, msg := range wantWarn {
		g, ok := got[f]
		if _, err := os.Lstat(filepath.Join(dir, "voices", f)); err != nil {
			continue // symlink not created
		}
		if !ok {
			t.Errorf("no warning for %s", f)
		} else if !strings.Contains(g, msg) {
			t.Errorf("warning for %s: %q, want it to contain %q", f, g, msg)
		}
		delete(got, f)
	}
	for f, msg := range got {
		t.Errorf("unexpected warning for %s: %s", f, msg)
	}
	if n := strings.Count(logBuf.String(), "skipped voice file"); n != len(w) {
		t.Errorf("logged %d warnings, returned %d", n, len(w))
	}
	if _, err := os.Stat(filepath.Join(dir, "voices", ".tmp-good1.voice.123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover temp file not removed: %v", err)
	}
	for _, f := range []string{"notes.txt", "README", "good1.voice.bak", "flipped.voice"} {
		if _, err := os.Stat(filepath.Join(dir, "voices", f)); err != nil {
			t.Errorf("Open removed or broke %s: %v", f, err)
		}
	}
}

func TestTempFilesKeptWhileLocked(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	addT(t, s, testVoice("a", 2, 16, 0), false)
	tmp := filepath.Join(dir, "voices", ".tmp-b.voice.999")
	writeRaw(t, dir, ".tmp-b.voice.999", []byte("in progress"))

	unlock, ok, err := lockDir(filepath.Join(dir, "voices"), time.Second)
	if err != nil || !ok {
		t.Fatalf("lockDir = %v, %v", ok, err)
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("temp file removed while a writer held the lock: %v", err)
	}
	unlock()
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file kept: %v", err)
	}
}

// TestLockFromOtherFile holds the OS lock through a separate file, as
// another process would, and checks that writers wait for it.
func TestLockFromOtherFile(t *testing.T) {
	if !haveOSLock {
		t.Skip("no OS file lock on this platform")
	}
	dir := t.TempDir()
	s := openT(t, dir, Options{LockTimeout: 50 * time.Millisecond})
	addT(t, s, testVoice("a", 2, 16, 0), false)
	f, err := os.OpenFile(filepath.Join(dir, "voices", lockFileName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := flock.TryLock(f); !ok || err != nil {
		t.Fatalf("tryLockFile = %v, %v", ok, err)
	}
	_, err = s.Add(testVoice("b", 2, 16, 1), false)
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("Add while locked = %v", err)
	}
	if errors.Is(err, ErrExists) || errors.Is(err, ErrLimit) || isInvalid(err, "name") {
		t.Errorf("lock timeout looks like a user error: %v", err)
	}
	if _, err := s.Delete("a"); err == nil {
		t.Error("Delete while locked succeeded")
	}
	writeRaw(t, dir, ".tmp-c.voice.1", nil)
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "voices", ".tmp-c.voice.1")); err != nil {
		t.Errorf("temp file removed while another process held the lock: %v", err)
	}
	flock.Unlock(f)
	addT(t, s, testVoice("b", 2, 16, 1), false)
}

func TestTwoStores(t *testing.T) {
	dir := t.TempDir()
	var logB changeLog
	a := openT(t, dir, Options{})
	b := openT(t, dir, Options{OnChange: logB.hook})

	addT(t, a, testVoice("x", 4, 16, 1), false)
	addT(t, a, testVoice("y", 4, 16, 2), false)
	if _, err := b.Get("x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("b sees x before Reload: %v", err)
	}
	// b cannot add what a added, even before it reloads.
	if _, err := b.Add(testVoice("x", 4, 16, 3), false); !errors.Is(err, ErrExists) {
		t.Errorf("b.Add(x) = %v, want ErrExists", err)
	}
	if w, err := b.Reload(); err != nil || len(w) != 0 {
		t.Fatalf("Reload = %v, %v", w, err)
	}
	bx, err := b.Get("x")
	if err != nil {
		t.Fatal(err)
	}
	ax, _ := a.Get("x")
	if bx.Key != ax.Key {
		t.Errorf("keys differ across stores: %q %q", ax.Key, bx.Key)
	}
	by, _ := b.Get("y")
	if calls := logB.take(); len(calls) != 0 {
		t.Errorf("OnChange on first sight: %v", calls)
	}

	// Unchanged voices keep their snapshots over a reload; changed and
	// removed ones are reported.
	addT(t, a, testVoice("x", 5, 16, 4), true)
	if _, err := a.Delete("y"); err != nil {
		t.Fatal(err)
	}
	addT(t, a, testVoice("z", 4, 16, 5), false)
	if _, err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if calls, want := logB.take(), []string{"x " + bx.Key, "y " + by.Key}; !slices.Equal(calls, want) {
		t.Errorf("OnChange %v, want %v", calls, want)
	}
	bz, err := b.Get("z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if again, _ := b.Get("z"); again != bz {
		t.Error("Reload replaced an unchanged voice's snapshot")
	}
	if calls := logB.take(); len(calls) != 0 {
		t.Errorf("OnChange with nothing changed: %v", calls)
	}
	if bx.Frames() != 4 {
		t.Error("held snapshot changed")
	}

	// b deletes a voice it knows although a replaced it.
	if old, err := b.Delete("z"); err != nil || old != bz {
		t.Errorf("b.Delete(z) = %v, %v", old, err)
	}
	if _, err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get("z"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a.Get(z) after b deleted it: %v", err)
	}
	// A voice on disk that b has not loaded can be deleted too.
	addT(t, a, testVoice("w", 3, 16, 7), false)
	if old, err := b.Delete("w"); err != nil || old == nil || old.Name != "w" {
		t.Errorf("b.Delete(unseen w) = %v, %v", old, err)
	}
	// And the directory vanishing empties the store.
	if err := os.RemoveAll(filepath.Join(dir, "voices")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := len(b.List()); n != 0 {
		t.Errorf("%d voices after the directory vanished", n)
	}
}

// TestConcurrentAddSameName races stores on one directory: exactly one
// Add without replace wins.
func TestConcurrentAddSameName(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	stores := make([]*Store, n)
	for i := range stores {
		stores[i] = openT(t, dir, Options{})
	}
	for round := range 5 {
		name := fmt.Sprintf("v%d", round)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.Add(testVoice(name, 3, 16, i), false)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrExists):
				t.Errorf("Add: %v", err)
			}
		}
		if wins != 1 {
			t.Errorf("round %d: %d Adds succeeded, want 1", round, wins)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	var hooks sync.Map
	s := openT(t, dir, Options{MaxVoices: 8, OnChange: func(name, key string) { hooks.Store(key, name) }})
	other := openT(t, dir, Options{MaxVoices: 8})
	names := []string{"a", "b", "c", "d", "e"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				name := names[(g+i)%len(names)]
				switch (g + i) % 6 {
				case 0, 1:
					_, err := s.Add(testVoice(name, 2+i%3, 16, g*100+i), true)
					if err != nil {
						t.Errorf("Add: %v", err)
					}
				case 2:
					if _, err := s.Delete(name); err != nil && !errors.Is(err, ErrNotFound) {
						t.Errorf("Delete: %v", err)
					}
				case 3:
					if v, err := s.Get(name); err == nil {
						if v.Name != name || v.Frames() < 2 || len(v.Codes[0]) != 16 {
							t.Errorf("Get(%s) = %s with %d frames", name, v.Name, v.Frames())
						}
					} else if !errors.Is(err, ErrNotFound) {
						t.Errorf("Get: %v", err)
					}
				case 4:
					l := s.List()
					if !slices.IsSortedFunc(l, func(a, b *Voice) int { return strings.Compare(a.Name, b.Name) }) {
						t.Error("List not sorted")
					}
				case 5:
					if g%2 == 0 {
						if _, err := other.Reload(); err != nil {
							t.Errorf("Reload: %v", err)
						}
					} else if _, err := other.Add(testVoice(name, 3, 16, i), true); err != nil {
						t.Errorf("other.Add: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	// What s shows is what is on disk once it reloads, and no temp files
	// are left.
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	fresh := openT(t, dir, Options{MaxVoices: 8})
	if d := cmp.Diff(fresh.List(), s.List()); d != "" {
		t.Errorf("reloaded store differs from a fresh one (-fresh +reloaded):\n%s", d)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "voices"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, _, err := Open("", Options{}); err == nil {
		t.Error("Open(\"\") succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, _, err := Open(file, Options{}); err == nil {
		t.Error("Open(a file) succeeded")
	}
	if _, _, err := Open(t.TempDir(), Options{NumCodebooks: 65}); err == nil {
		t.Error("Open with 65 codebooks succeeded")
	}
	if _, _, err := Open(t.TempDir(), Options{CodebookSize: 65537}); err == nil {
		t.Error("Open with codebook size 65537 succeeded")
	}
	// Voices dir that is a file: Add fails with an I/O error, not a user error.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "voices"), nil, 0o644)
	if _, _, err := Open(dir, Options{}); err == nil {
		t.Error("Open with voices as a file succeeded")
	}
}

func TestAddIOError(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	// The voices directory cannot be created: a file is in the way.
	if err := os.WriteFile(filepath.Join(dir, "voices"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Add(testVoice("b", 2, 16, 1), false)
	var ie *InvalidError
	var le *LimitError
	if err == nil || errors.Is(err, ErrExists) || errors.Is(err, ErrNotFound) || errors.As(err, &ie) || errors.As(err, &le) {
		t.Errorf("Add = %v, want an I/O error", err)
	} else if !strings.Contains(err.Error(), `save voice "b"`) {
		t.Errorf("Add error lacks context: %v", err)
	}
	if len(s.List()) != 0 {
		t.Error("failed Add stored the voice")
	}
}

func TestReadOnlyDir(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root ignores permissions")
	}
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	addT(t, s, testVoice("a", 2, 16, 0), false)
	writeRaw(t, dir, ".tmp-x.voice.1", nil)
	vdir := filepath.Join(dir, "voices")
	os.Remove(filepath.Join(vdir, lockFileName))
	if err := os.Chmod(vdir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(vdir, 0o755)
	s2, w, err := Open(dir, Options{})
	if err != nil || len(w) != 0 || len(s2.List()) != 1 {
		t.Fatalf("Open read-only = %v voices, %v, %v", len(s2.List()), w, err)
	}
	_, err = s2.Add(testVoice("b", 2, 16, 1), false)
	if err == nil || errors.Is(err, ErrExists) || isInvalid(err, "name") {
		t.Errorf("Add in read-only dir = %v, want an I/O error", err)
	}
}
