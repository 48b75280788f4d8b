package hub

import (
	"strings"
	"testing"
)

func TestParseRepoID(t *testing.T) {
	commit := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		in, repo, rev string
		err           string // substring of the error; "" means valid
	}{
		{"OpenMOSS-Team/MOSS-TTS-Nano-100M", "OpenMOSS-Team/MOSS-TTS-Nano-100M", "main", ""},
		{"mlx-community/MOSS-TTS-Nano-100M@v1.0", "mlx-community/MOSS-TTS-Nano-100M", "v1.0", ""},
		{"org/name@" + commit, "org/name", commit, ""},
		{"org/name@refs/pr/12", "org/name", "refs/pr/12", ""},
		{"org/name@feature/x-y_z", "org/name", "feature/x-y_z", ""},
		{"_org/a.b_c-d", "_org/a.b_c-d", "main", ""},
		{"o/" + strings.Repeat("n", 96), "o/" + strings.Repeat("n", 96), "main", ""},
		{"", "", "", "empty repo id"},
		{"name", "", "", "no organization"},
		{"a/b/c", "", "", "2 slashes"},
		{"datasets/org/name", "", "", "2 slashes"},
		{"/name", "", "", "organization is empty"},
		{"org/", "", "", "name is empty"},
		{"/", "", "", "organization is empty"},
		{"../x", "", "", "must start and end"},
		{"org/..", "", "", "must start and end"},
		{"./x", "", "", "must start and end"},
		{"org/-name", "", "", "must start and end"},
		{"org/name.", "", "", "must start and end"},
		{"org/na--me", "", "", `"--"`},
		{"org/na..me", "", "", `".."`},
		{"org/name.git", "", "", ".git"},
		{"org/na me", "", "", "contains ' '"},
		{"org/näme", "", "", "contains 'ä'"},
		{"org\\name", "", "", "no organization"},
		{"o/" + strings.Repeat("n", 97), "", "", "97 characters"},
		{"org/name@", "", "", "empty"},
		{"org/name@@", "", "", "not a branch"},
		{"org/name@a@{1}", "", "", "not a branch"},
		{"org/name@a..b", "", "", "not a branch"},
		{"org/name@../../etc", "", "", "not a branch"},
		{"org/name@/abs", "", "", "not a valid"},
		{"org/name@a//b", "", "", "not a valid"},
		{"org/name@a/", "", "", "not a valid"},
		{"org/name@.hidden", "", "", "not a valid"},
		{"org/name@x.lock", "", "", "not a valid"},
		{"org/name@a b", "", "", "contains ' '"},
		{"org/name@a\x00b", "", "", "contains"},
		{"org/name@a\\b", "", "", "contains"},
		{"org/name@a:b", "", "", "contains"},
		{"org/name@" + strings.Repeat("x", 256), "", "", "256 bytes"},
		{"org/name@\xff", "", "", "UTF-8"},
	} {
		repo, rev, err := ParseRepoID(tc.in)
		if tc.err == "" {
			if err != nil || repo != tc.repo || rev != tc.rev {
				t.Errorf("ParseRepoID(%q) = %q, %q, %v; want %q, %q", tc.in, repo, rev, err, tc.repo, tc.rev)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || KindOf(err) != KindInvalidModel {
			t.Errorf("ParseRepoID(%q) error = %v; want an invalid-model error containing %q", tc.in, err, tc.err)
		}
	}
}

func TestRepoFolderName(t *testing.T) {
	if got := RepoFolderName("OpenMOSS-Team/MOSS-TTS-Nano-100M"); got != "models--OpenMOSS-Team--MOSS-TTS-Nano-100M" {
		t.Errorf("RepoFolderName = %q", got)
	}
}

func FuzzParseRepoID(f *testing.F) {
	for _, s := range []string{
		"OpenMOSS-Team/MOSS-TTS-Nano-100M", "org/name@main", "org/name@refs/pr/1", "../x", "a/b/c", "/", "@", "org/name@",
		"org/name@../../x", "org/na--me", "org/name.git", "org/\x00", "org/name@\xff\xfe", "~/x", "C:\\x\\y", "org/name@a@{1}",
		"org/name@" + strings.Repeat("ab", 20), strings.Repeat("a", 200) + "/b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		repo, rev, err := ParseRepoID(s)
		if err != nil {
			if KindOf(err) != KindInvalidModel {
				t.Fatalf("error of kind %v: %v", KindOf(err), err)
			}
			return
		}
		if strings.Count(repo, "/") != 1 || rev == "" {
			t.Fatalf("accepted %q as repo %q rev %q", s, repo, rev)
		}
		// The cache folder name must map back to exactly this repo.
		folder := RepoFolderName(repo)
		if strings.Count(folder, "--") != 2 || strings.ContainsAny(folder, `/\`) {
			t.Fatalf("ambiguous or unsafe folder %q for %q", folder, repo)
		}
		// Revisions become paths below refs/: they must stay there.
		if !validFileName(rev) {
			t.Fatalf("revision %q is not a safe relative path", rev)
		}
		repo2, rev2, err := ParseRepoID(repo + "@" + rev)
		if err != nil || repo2 != repo || rev2 != rev {
			t.Fatalf("round trip of %q: %q %q %v", s, repo2, rev2, err)
		}
	})
}
