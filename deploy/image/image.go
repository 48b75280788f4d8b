// Package image writes container images without a container daemon: an OCI
// image layout directory (what registries, skopeo, crane, podman and
// containerd import) and a tarball that `docker load` reads, from files
// given in memory and on disk.
//
// It uses only the standard library: an image is a few tar layers, their
// sha256 digests and three small JSON documents (config, manifest, index),
// and writing them by hand keeps the deploy module's dependencies to the
// Kubernetes types it validates manifests with. The output is
// reproducible: file times, owners and gzip headers are fixed, so the same
// inputs give the same digests.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Media types of the OCI image specification (image-spec v1.1).
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// AnnotationRefName names an image in an OCI layout's index.json (the tag
// that tools such as skopeo, crane and podman select with "DIR:TAG").
const AnnotationRefName = "org.opencontainers.image.ref.name"

// File is one entry of a layer: a regular file (Data or Source), a
// directory (Dir) or a symbolic link (Link).
type File struct {
	Path     string // absolute path in the image, e.g. "/etc/passwd"
	Mode     fs.FileMode
	UID, GID int
	Data     []byte // content of a regular file, unless Source is set
	Source   string // read a regular file's content from this host path
	Dir      bool
	Link     string // target of a symbolic link
}

// Layer is a named set of files; Comment is recorded in the config's history.
type Layer struct {
	Comment string
	Files   []File
}

// Config is the runtime configuration of an image, as the OCI image config
// "config" object spells it.
type Config struct {
	User         string              `json:"User,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	Volumes      map[string]struct{} `json:"Volumes,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	StopSignal   string              `json:"StopSignal,omitempty"`
}

// Platform is an image's operating system and architecture.
type Platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant,omitempty"`
}

// String returns "os/arch[/variant]".
func (p Platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// ParsePlatform reads "os/arch[/variant]".
func ParsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Platform{}, fmt.Errorf("platform %q: want os/arch[/variant]", s)
	}
	p := Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// Image is one platform's image: its layers, bottom first, and config.
type Image struct {
	Platform Platform
	Layers   []Layer
	Config   Config
	Created  time.Time
}

// Descriptor points at a blob (OCI image-spec descriptor).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Index is an OCI image index (also the layout's index.json).
type Index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []Descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// ConfigFile is the OCI image configuration blob.
type ConfigFile struct {
	Created      string  `json:"created,omitempty"`
	Architecture string  `json:"architecture"`
	OS           string  `json:"os"`
	Variant      string  `json:"variant,omitempty"`
	Config       Config  `json:"config"`
	RootFS       RootFS  `json:"rootfs"`
	History      []Event `json:"history,omitempty"`
}

// RootFS lists the digests of the uncompressed layers (diff IDs).
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// Event is one entry of an image's history.
type Event struct {
	Created   string `json:"created,omitempty"`
	CreatedBy string `json:"created_by,omitempty"`
	Comment   string `json:"comment,omitempty"`
}

// blobs collects content-addressed blobs in memory: a static binary and a
// certificate bundle are tens of MiB, which is no reason for temporary files.
type blobs map[string][]byte

func (b blobs) add(mediaType string, data []byte) Descriptor {
	d := digest(data)
	b[d] = data
	return Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}
}

func (b blobs) addJSON(mediaType string, v any) (Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Descriptor{}, err
	}
	return b.add(mediaType, data), nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// built is one platform's image once its blobs exist.
type built struct {
	manifest Descriptor
	config   Descriptor
	layers   []Descriptor
}

func (b blobs) build(img *Image) (built, error) {
	var out built
	cf := ConfigFile{
		Architecture: img.Platform.Architecture, OS: img.Platform.OS, Variant: img.Platform.Variant,
		Config: img.Config, RootFS: RootFS{Type: "layers"},
	}
	created := ""
	if !img.Created.IsZero() {
		created = img.Created.UTC().Format(time.RFC3339)
	}
	cf.Created = created
	for i, l := range img.Layers {
		raw, err := tarLayer(l.Files, img.Created)
		if err != nil {
			return out, fmt.Errorf("layer %d (%s): %w", i, l.Comment, err)
		}
		gz, err := gzipBytes(raw)
		if err != nil {
			return out, fmt.Errorf("layer %d (%s): %w", i, l.Comment, err)
		}
		out.layers = append(out.layers, b.add(MediaTypeLayer, gz))
		cf.RootFS.DiffIDs = append(cf.RootFS.DiffIDs, digest(raw))
		cf.History = append(cf.History, Event{Created: created, CreatedBy: "nanovox deploy/image", Comment: l.Comment})
	}
	var err error
	if out.config, err = b.addJSON(MediaTypeConfig, cf); err != nil {
		return out, err
	}
	m := Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Config: out.config, Layers: out.layers}
	if out.manifest, err = b.addJSON(MediaTypeManifest, m); err != nil {
		return out, err
	}
	p := img.Platform
	out.manifest.Platform = &p
	return out, nil
}

// WriteLayout writes images, one per platform, as an OCI image layout in
// dir (created if missing; blobs already there are kept): an image index
// listing every platform, named ref in index.json.
func WriteLayout(dir, ref string, images []*Image) (Descriptor, error) {
	if len(images) == 0 {
		return Descriptor{}, errors.New("no images")
	}
	b := blobs{}
	idx := Index{SchemaVersion: 2, MediaType: MediaTypeIndex}
	seen := map[string]bool{}
	for _, img := range images {
		if seen[img.Platform.String()] {
			return Descriptor{}, fmt.Errorf("platform %s given twice", img.Platform)
		}
		seen[img.Platform.String()] = true
		bi, err := b.build(img)
		if err != nil {
			return Descriptor{}, fmt.Errorf("%s: %w", img.Platform, err)
		}
		idx.Manifests = append(idx.Manifests, bi.manifest)
	}
	top, err := b.addJSON(MediaTypeIndex, idx)
	if err != nil {
		return Descriptor{}, err
	}
	top.Annotations = map[string]string{AnnotationRefName: ref}
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		return Descriptor{}, err
	}
	for _, d := range sortedKeys(b) {
		p := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d, "sha256:"))
		if err := writeFileAtomic(p, b[d]); err != nil {
			return Descriptor{}, err
		}
	}
	if err := writeFileAtomic(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return Descriptor{}, err
	}
	// index.json holds this image only: a layout written twice with the same
	// tag must not list the old image beside the new one.
	top.Platform = nil
	data, err := json.MarshalIndent(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{top}}, "", "  ")
	if err != nil {
		return Descriptor{}, err
	}
	return top, writeFileAtomic(filepath.Join(dir, "index.json"), append(data, '\n'))
}

// WriteDockerArchive writes one platform's image as a tarball that
// `docker load` (and `podman load`) reads: the legacy manifest.json with
// the repository tag, beside the same blobs in OCI layout form, which is
// what `docker save` itself writes since Docker 25.
func WriteDockerArchive(file, tag string, img *Image) error {
	b := blobs{}
	bi, err := b.build(img)
	if err != nil {
		return err
	}
	blobPath := func(d Descriptor) string { return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:") }
	type dockerManifest struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	dm := []dockerManifest{{Config: blobPath(bi.config), RepoTags: []string{tag}}}
	for _, l := range bi.layers {
		dm[0].Layers = append(dm[0].Layers, blobPath(l))
	}
	mj, err := json.Marshal(dm)
	if err != nil {
		return err
	}
	man := bi.manifest
	man.Platform = nil
	man.Annotations = map[string]string{AnnotationRefName: tag, "io.containerd.image.name": tag}
	ij, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{man}})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte) error {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: img.Created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: img.Created, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, d := range sortedKeys(b) {
		if err := add("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), b[d]); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}, {"index.json", ij}, {"manifest.json", mj}} {
		if err := add(f.name, f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return writeFileAtomic(file, buf.Bytes())
}

// tarLayer writes files as an uncompressed tar stream, parents before
// children, each directory once, with fixed times so that the layer's
// digest depends on its content only.
func tarLayer(files []File, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	sorted := append([]File(nil), files...)
	for _, f := range sorted {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("%q: want a clean absolute path other than /", f.Path)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	seen := map[string]bool{}
	for _, f := range sorted {
		if seen[f.Path] {
			return nil, fmt.Errorf("%s: listed twice", f.Path)
		}
		seen[f.Path] = true
		// Every parent must be listed: runtimes would create a missing one
		// root-owned with a mode of their choosing, which is how a data
		// directory ends up unwritable for the image's user.
		for dir := path.Dir(f.Path); dir != "/"; dir = path.Dir(dir) {
			if !seen[dir] && !hasDir(sorted, dir) {
				return nil, fmt.Errorf("%s: parent directory %s is not in the layer", f.Path, dir)
			}
		}
		h := &tar.Header{
			Name: strings.TrimPrefix(f.Path, "/"), Mode: int64(f.Mode.Perm()),
			Uid: f.UID, Gid: f.GID, ModTime: mtime, Format: tar.FormatPAX,
		}
		if f.Mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000 // c_ISVTX: a world-writable /tmp needs it
		}
		var data []byte
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		default:
			h.Typeflag = tar.TypeReg
			data = f.Data
			if f.Source != "" {
				var err error
				if data, err = os.ReadFile(f.Source); err != nil {
					return nil, err
				}
			}
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func hasDir(files []File, p string) bool {
	for _, f := range files {
		if f.Path == p && f.Dir {
			return true
		}
	}
	return false
}

// gzipBytes compresses with a header that carries no name and no time.
func gzipBytes(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys(b blobs) []string {
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeFileAtomic writes through a temporary file and a rename, so an
// interrupted build leaves no truncated blob under its digest's name.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), name)
}
