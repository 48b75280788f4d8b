package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanovox/nanovox/deploy/image"
)

// TestRun drives the command with prebuilt stand-in binaries (the real one
// is run by the deploy package's TestImage): both platforms in the layout,
// the tag, the version label, and the tarball.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins[arch] = p
	}
	out, tarFile := filepath.Join(dir, "oci"), filepath.Join(dir, "image.tar")
	err := run(context.Background(), []string{
		"-repo", dir, "-out", out, "-tar", tarFile, "-version", "v1.2.3", "-licenses", "MIT",
		"-binary", "linux/amd64=" + bins["amd64"], "-binary", "linux/arm64=" + bins["arm64"],
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		r, err := image.ReadLayout(out, "nanovox:v1.2.3", image.Platform{OS: "linux", Architecture: arch})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if v := r.Config.Config.Labels["org.opencontainers.image.version"]; v != "v1.2.3" {
			t.Errorf("%s: version label %q", arch, v)
		}
		if l := r.Config.Config.Labels["org.opencontainers.image.licenses"]; l != "MIT" {
			t.Errorf("%s: licenses label %q", arch, l)
		}
		files, err := image.Files(r.Layers[len(r.Layers)-1])
		if err != nil {
			t.Fatal(err)
		}
		if got := string(files["/nanovox"].Data); got != "binary for "+arch {
			t.Errorf("%s: /nanovox holds %q", arch, got)
		}
	}
	if fi, err := os.Stat(tarFile); err != nil || fi.Size() == 0 {
		t.Errorf("tarball: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	tests := [][]string{
		{"-repo", dir},                              // nothing to write
		{"-repo", dir, "-out", dir, "extra"},        // stray argument
		{"-repo", dir, "-out", dir, "-binary", "x"}, // not PLATFORM=PATH
		{"-repo", dir, "-out", dir, "-platforms", "windows/amd64"},
		{"-repo", dir, "-tar", filepath.Join(dir, "t.tar"), "-tar-platform", "linux/arm64", "-binary", "linux/arm64=" + filepath.Join(dir, "missing")},
	}
	for _, args := range tests {
		if err := run(context.Background(), args); err == nil {
			t.Errorf("run(%q): no error", args)
		}
	}
}
