package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testImage(arch, payload string) *Image {
	return &Image{
		Platform: Platform{OS: "linux", Architecture: arch},
		Created:  time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Layers: []Layer{
			{Comment: "base", Files: []File{
				{Path: "/etc", Dir: true, Mode: 0o755},
				{Path: "/etc/passwd", Mode: 0o644, Data: []byte("app:x:65532:65532::/data:/sbin/nologin\n")},
				{Path: "/data", Dir: true, Mode: 0o755, UID: 65532, GID: 65532},
				{Path: "/tmp", Dir: true, Mode: 0o777 | fs.ModeSticky},
			}},
			{Comment: "binary", Files: []File{{Path: "/app", Mode: 0o755, Data: []byte(payload)}}},
		},
		Config: Config{
			User: "65532:65532", Entrypoint: []string{"/app", "serve"},
			ExposedPorts: map[string]struct{}{"8080/tcp": {}},
			Labels:       map[string]string{"org.opencontainers.image.version": "v1"},
		},
	}
}

func TestLayoutRoundTrip(t *testing.T) {
	dir := t.TempDir()
	imgs := []*Image{testImage("amd64", "amd64 binary"), testImage("arm64", "arm64 binary")}
	if _, err := WriteLayout(dir, "app:v1", imgs); err != nil {
		t.Fatal(err)
	}
	for _, img := range imgs {
		r, err := ReadLayout(dir, "app:v1", img.Platform)
		if err != nil {
			t.Fatalf("%s: %v", img.Platform, err)
		}
		if r.Config.Config.User != "65532:65532" || strings.Join(r.Config.Config.Entrypoint, " ") != "/app serve" {
			t.Errorf("%s: config %+v", img.Platform, r.Config.Config)
		}
		if _, ok := r.Config.Config.ExposedPorts["8080/tcp"]; !ok {
			t.Errorf("%s: exposed ports %v", img.Platform, r.Config.Config.ExposedPorts)
		}
		if len(r.Layers) != 2 || len(r.Config.History) != 2 {
			t.Fatalf("%s: %d layers, %d history entries", img.Platform, len(r.Layers), len(r.Config.History))
		}
		bin, err := Files(r.Layers[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := string(bin["/app"].Data); got != img.Platform.Architecture+" binary" {
			t.Errorf("%s: /app holds %q", img.Platform, got)
		}
		base, err := Files(r.Layers[0])
		if err != nil {
			t.Fatal(err)
		}
		data := base["/data"].Header
		if data == nil || data.Typeflag != tar.TypeDir || data.Uid != 65532 || data.Mode != 0o755 {
			t.Errorf("/data: %+v", data)
		}
		if tmp := base["/tmp"].Header; tmp == nil || tmp.Mode != 0o1777 {
			t.Errorf("/tmp: %+v", tmp)
		}
	}
	// The two platforms share the base layer's blob.
	ents, err := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	// index + 2 × (manifest, config, binary layer) + 1 shared base layer
	if len(ents) != 8 {
		t.Errorf("%d blobs, want 8", len(ents))
	}
	if _, err := ReadLayout(dir, "app:v2", imgs[0].Platform); err == nil {
		t.Error("ReadLayout found a tag that was never written")
	}
	if _, err := ReadLayout(dir, "app:v1", Platform{OS: "linux", Architecture: "riscv64"}); err == nil {
		t.Error("ReadLayout found a platform that was never written")
	}
}

func TestLayoutReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	da, err := WriteLayout(a, "app:v1", []*Image{testImage("amd64", "x")})
	if err != nil {
		t.Fatal(err)
	}
	db, err := WriteLayout(b, "app:v1", []*Image{testImage("amd64", "x")})
	if err != nil {
		t.Fatal(err)
	}
	if da.Digest != db.Digest {
		t.Errorf("same input, digests %s and %s", da.Digest, db.Digest)
	}
	dc, err := WriteLayout(b, "app:v1", []*Image{testImage("amd64", "y")})
	if err != nil {
		t.Fatal(err)
	}
	if dc.Digest == da.Digest {
		t.Error("another binary gave the same digest")
	}
	// Rewriting a tag replaces it in index.json.
	var idx Index
	if err := readJSON(filepath.Join(b, "index.json"), &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != dc.Digest {
		t.Errorf("index.json after a rewrite: %+v", idx.Manifests)
	}
}

func TestReadLayoutDetectsTampering(t *testing.T) {
	dir := t.TempDir()
	img := testImage("amd64", "binary")
	if _, err := WriteLayout(dir, "app:v1", []*Image{img}); err != nil {
		t.Fatal(err)
	}
	r, err := ReadLayout(dir, "app:v1", img.Platform)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(r.Manifest.Layers[1].Digest, "sha256:"))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLayout(dir, "app:v1", img.Platform); err == nil {
		t.Error("a changed layer blob was read without error")
	}
}

func TestLayerErrors(t *testing.T) {
	tests := []struct {
		name  string
		files []File
	}{
		{"missing parent", []File{{Path: "/etc/passwd", Data: []byte("x")}}},
		{"relative", []File{{Path: "etc", Dir: true}}},
		{"unclean", []File{{Path: "/a/../b", Dir: true}}},
		{"root", []File{{Path: "/", Dir: true}}},
		{"twice", []File{{Path: "/a", Data: []byte("1")}, {Path: "/a", Data: []byte("2")}}},
		{"missing source", []File{{Path: "/a", Source: "/nonexistent/file"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tarLayer(tt.files, time.Time{}); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestDockerArchive(t *testing.T) {
	file := filepath.Join(t.TempDir(), "image.tar")
	img := testImage("amd64", "binary")
	if err := WriteDockerArchive(file, "app:v1", img); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name], _ = io.ReadAll(tr)
	}
	var dm []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(got["manifest.json"], &dm); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(dm) != 1 || len(dm[0].RepoTags) != 1 || dm[0].RepoTags[0] != "app:v1" || len(dm[0].Layers) != 2 {
		t.Fatalf("manifest.json: %+v", dm)
	}
	var cf ConfigFile
	if err := json.Unmarshal(got[dm[0].Config], &cf); err != nil {
		t.Fatalf("config %s: %v", dm[0].Config, err)
	}
	if cf.Config.User != "65532:65532" || cf.Architecture != "amd64" {
		t.Errorf("config: %+v", cf)
	}
	for i, l := range dm[0].Layers {
		data, ok := got[l]
		if !ok {
			t.Fatalf("layer %s is not in the archive", l)
		}
		raw, err := gunzip(data)
		if err != nil {
			t.Fatal(err)
		}
		if digest(raw) != cf.RootFS.DiffIDs[i] {
			t.Errorf("layer %d: diff ID mismatch", i)
		}
	}
	if !bytes.Contains(got["index.json"], []byte(`"app:v1"`)) {
		t.Errorf("index.json does not name the tag: %s", got["index.json"])
	}
}

func TestParsePlatform(t *testing.T) {
	tests := []struct {
		in   string
		want Platform
		ok   bool
	}{
		{"linux/amd64", Platform{OS: "linux", Architecture: "amd64"}, true},
		{"linux/arm64/v8", Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, true},
		{"linux", Platform{}, false},
		{"linux/", Platform{}, false},
		{"a/b/c/d", Platform{}, false},
	}
	for _, tt := range tests {
		got, err := ParsePlatform(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePlatform(%q) = %+v, %v", tt.in, got, err)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("String() = %q, want %q", got.String(), tt.in)
		}
	}
}
