package image

import (
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// TestIndependentReader has go-containerregistry (what crane, ko and many
// registries' tools are built on) read the layout and the docker tarball
// this package writes and validate every digest, size, diff ID and media
// type: a second opinion from code this package's author did not write.
func TestIndependentReader(t *testing.T) {
	dir := t.TempDir()
	imgs := []*Image{testImage("amd64", "amd64 binary"), testImage("arm64", "arm64 binary")}
	if _, err := WriteLayout(dir, "app:v1", imgs); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations[AnnotationRefName] != "app:v1" {
		t.Fatalf("index.json: %+v", tm.Manifests)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("image index: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var archs []string
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate.Image(img); err != nil {
			t.Errorf("%s: %v", d.Platform, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != d.Platform.Architecture || cf.Config.User != "65532:65532" {
			t.Errorf("%s: config %s/%s user %q", d.Platform, cf.OS, cf.Architecture, cf.Config.User)
		}
		archs = append(archs, d.Platform.Architecture)
	}
	if len(archs) != 2 {
		t.Errorf("platforms %v, want amd64 and arm64", archs)
	}

	file := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteDockerArchive(file, "app:v1", imgs[0]); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("docker tarball: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "amd64" || len(cf.Config.Entrypoint) != 2 {
		t.Errorf("docker tarball config: %+v", cf.Config)
	}
}
