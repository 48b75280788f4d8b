package hub

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

var sha40 = strings.Repeat("0123456789", 4)

func TestParseRepoInfo(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, in string
		names    []string
		err      string
	}{
		{"full", `{"id":"o/n","sha":"` + sha40 + `","siblings":[{"rfilename":"config.json","size":12,"blobId":"x"},` +
			`{"rfilename":"model.safetensors","size":100,"lfs":{"sha256":"` + sum + `","size":100,"pointerSize":134}}]}`,
			[]string{"config.json", "model.safetensors"}, ""},
		{"names only", `{"sha":"` + sha40 + `","siblings":[{"rfilename":"a"},{"rfilename":"b/c"}]}`, []string{"a", "b/c"}, ""},
		{"unsafe names dropped", `{"sha":"` + sha40 + `","siblings":[{"rfilename":"../x"},{"rfilename":"/abs"},{"rfilename":""},{"rfilename":"ok"},{"rfilename":"ok"}]}`,
			[]string{"ok"}, ""},
		{"no siblings", `{"sha":"` + sha40 + `"}`, nil, ""},
		{"short sha", `{"sha":"abc","siblings":[]}`, nil, "not a 40-hex"},
		{"traversal sha", `{"sha":"../../../../../../../../../../../../../x","siblings":[]}`, nil, "not a 40-hex"},
		{"upper-case sha", `{"sha":"` + strings.ToUpper(strings.Repeat("ab", 20)) + `"}`, nil, "not a 40-hex"},
		{"negative size", `{"sha":"` + sha40 + `","siblings":[{"rfilename":"a","size":-1}]}`, nil, "size -1"},
		{"bad lfs sha", `{"sha":"` + sha40 + `","siblings":[{"rfilename":"a","lfs":{"sha256":"zz","size":1}}]}`, nil, "malformed lfs"},
		{"not json", `<html>`, nil, "parse revision info"},
		{"wrong types", `{"sha":1}`, nil, "parse revision info"},
	} {
		info, err := parseRepoInfo([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var names []string
		for _, s := range info.Siblings {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf("%s: names %q, want %q", tc.name, names, tc.names)
		}
	}
}

func FuzzParseRepoInfo(f *testing.F) {
	for _, s := range []string{
		`{"sha":"` + sha40 + `","siblings":[{"rfilename":"config.json","size":1,"blobId":"x","lfs":{"sha256":"` + strings.Repeat("0", 64) + `","size":1,"pointerSize":1}}]}`,
		`{"sha":"` + sha40 + `","siblings":[{"rfilename":"../../x"},{"rfilename":"a\\b"},{"rfilename":null}]}`,
		`{"sha":null}`, `{"siblings":{}}`, `[]`, `{"sha":"` + sha40 + `","siblings":[{"rfilename":"a","size":1e30}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := parseRepoInfo(data)
		if err != nil {
			return
		}
		if !isCommitHash(info.SHA) {
			t.Fatalf("accepted sha %q", info.SHA)
		}
		for _, s := range info.Siblings {
			if !validFileName(s.Name) || s.fileSize() < -1 {
				t.Fatalf("accepted sibling %+v", s)
			}
		}
	})
}

func FuzzParseTreeCache(f *testing.F) {
	for _, s := range []string{
		`{"format_version":1,"files":{"config.json":{"size":1,"blob_id":"x"},"m.safetensors":{"size":2,"blob_id":"y","lfs_sha256":"z","lfs_size":2}}}`,
		`{"format_version":2,"files":{}}`, `{"format_version":1,"files":{"../x":{"size":1,"blob_id":"x"}}}`,
		`{"format_version":1,"files":{"a":{}}}`, `{"format_version":1}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		names, err := parseTreeCache(data)
		if err != nil {
			return
		}
		for _, n := range names {
			if !validFileName(n) {
				t.Fatalf("accepted %q", n)
			}
		}
	})
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in           string
		start, total int64
		ok           bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 0-0/1", 0, 1, true},
		{"bytes 5-9/*", 5, -1, true},
		{"bytes 100-199/150", 0, 0, false},
		{"bytes 9-5/20", 0, 0, false},
		{"bytes */200", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"bytes -1-2/3", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, total, ok := parseContentRange(tc.in)
		if ok != tc.ok || (ok && (start != tc.start || total != tc.total)) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v", tc.in, start, total, ok)
		}
	}
}

func TestETag(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		valid    bool
	}{
		{`"` + sha40 + `"`, sha40, true},
		{`W/"abc-123"`, "abc-123", true},
		{`abc`, "abc", true},
		{`""`, "", false},
		{`"../x"`, "../x", false},
		{`"a/b"`, "a/b", false},
		{`".."`, "..", false},
	} {
		got := normalizeETag(tc.in)
		if got != tc.want || validETag(got) != tc.valid {
			t.Errorf("normalizeETag(%q) = %q (valid %v)", tc.in, got, validETag(got))
		}
	}
}

func TestCheckRedirect(t *testing.T) {
	req := func(method, u string) *http.Request {
		r, err := http.NewRequest(method, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer x")
		return r
	}
	for _, tc := range []struct {
		method, from, to string
		keepAuth         bool
		stop             bool
	}{
		{"GET", "https://huggingface.co/a", "https://huggingface.co/b", true, false},
		{"GET", "https://huggingface.co/a", "https://cdn-lfs.huggingface.co/b", false, false},
		{"GET", "http://127.0.0.1:1/a", "http://127.0.0.1:2/b", false, false},
		{"GET", "https://huggingface.co/a", "http://huggingface.co/b", false, false},
		{"HEAD", "https://huggingface.co/a", "https://huggingface.co/b", true, false},
		{"HEAD", "https://huggingface.co/a", "https://cas-bridge.xethub.hf.co/b", true, true},
	} {
		next := req(tc.method, tc.to)
		err := checkRedirect(next, []*http.Request{req(tc.method, tc.from)})
		if stopped := errors.Is(err, http.ErrUseLastResponse); stopped != tc.stop {
			t.Errorf("%s %s -> %s: err = %v", tc.method, tc.from, tc.to, err)
		}
		if got := next.Header.Get("Authorization") != ""; !tc.stop && got != tc.keepAuth {
			t.Errorf("%s %s -> %s: Authorization kept = %v", tc.method, tc.from, tc.to, got)
		}
	}
	via := make([]*http.Request, 10)
	for i := range via {
		via[i] = req("GET", "https://huggingface.co/")
	}
	if err := checkRedirect(req("GET", "https://huggingface.co/"), via); err == nil {
		t.Error("an 11th redirect was followed")
	}
}
