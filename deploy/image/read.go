package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Read is one platform's image read back from an OCI layout, each blob
// checked against its digest.
type Read struct {
	Ref      string
	Index    Index // the image index index.json points at
	Manifest Manifest
	Config   ConfigFile
	Layers   [][]byte // compressed layer blobs, bottom first
}

// maxBlob bounds a blob read back: a layout is outside input to the reader.
const maxBlob = 1 << 30

// ReadLayout reads the image named ref for platform from the OCI layout in
// dir, verifying every blob it reads.
func ReadLayout(dir, ref string, platform Platform) (*Read, error) {
	blob := func(d Descriptor, want string) ([]byte, error) {
		if d.MediaType != want {
			return nil, fmt.Errorf("%s: media type %q, want %q", d.Digest, d.MediaType, want)
		}
		hexd, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok || len(hexd) != 64 || strings.ContainsAny(hexd, "/\\.") {
			return nil, fmt.Errorf("digest %q: want sha256:<64 hex digits>", d.Digest)
		}
		if d.Size < 0 || d.Size > maxBlob {
			return nil, fmt.Errorf("%s: size %d out of range", d.Digest, d.Size)
		}
		data, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", hexd))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) != d.Size || digest(data) != d.Digest {
			return nil, fmt.Errorf("blob %s: content does not match its descriptor (%d bytes, %s)", d.Digest, len(data), digest(data))
		}
		return data, nil
	}
	layout, err := os.ReadFile(filepath.Join(dir, "oci-layout"))
	if err != nil {
		return nil, err
	}
	var lv struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(layout, &lv); err != nil || lv.Version != "1.0.0" {
		return nil, fmt.Errorf("oci-layout: want imageLayoutVersion 1.0.0, have %q (%v)", layout, err)
	}
	var top Index
	if err := readJSON(filepath.Join(dir, "index.json"), &top); err != nil {
		return nil, err
	}
	r := &Read{Ref: ref}
	var found *Descriptor
	for i, d := range top.Manifests {
		if d.Annotations[AnnotationRefName] == ref {
			found = &top.Manifests[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("index.json names no image %q", ref)
	}
	data, err := blob(*found, MediaTypeIndex)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.Index); err != nil {
		return nil, fmt.Errorf("image index: %w", err)
	}
	var md *Descriptor
	for i, d := range r.Index.Manifests {
		if d.Platform != nil && *d.Platform == platform {
			md = &r.Index.Manifests[i]
		}
	}
	if md == nil {
		return nil, fmt.Errorf("image %q has no %s manifest", ref, platform)
	}
	if data, err = blob(*md, MediaTypeManifest); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.Manifest); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if data, err = blob(r.Manifest.Config, MediaTypeConfig); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.Config); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if r.Config.OS != platform.OS || r.Config.Architecture != platform.Architecture {
		return nil, fmt.Errorf("config is for %s/%s, the index says %s", r.Config.OS, r.Config.Architecture, platform)
	}
	if len(r.Config.RootFS.DiffIDs) != len(r.Manifest.Layers) {
		return nil, fmt.Errorf("config lists %d diff IDs for %d layers", len(r.Config.RootFS.DiffIDs), len(r.Manifest.Layers))
	}
	for i, l := range r.Manifest.Layers {
		data, err := blob(l, MediaTypeLayer)
		if err != nil {
			return nil, err
		}
		raw, err := gunzip(data)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
		if got := digest(raw); got != r.Config.RootFS.DiffIDs[i] {
			return nil, fmt.Errorf("layer %s: uncompressed digest %s, config says %s", l.Digest, got, r.Config.RootFS.DiffIDs[i])
		}
		r.Layers = append(r.Layers, data)
	}
	return r, nil
}

// Entry is a file read from a layer.
type Entry struct {
	Header *tar.Header
	Data   []byte
}

// Files lists the entries of a compressed layer by path ("/etc/passwd").
func Files(layer []byte) (map[string]Entry, error) {
	raw, err := gunzip(layer)
	if err != nil {
		return nil, err
	}
	out := map[string]Entry{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxBlob))
		if err != nil {
			return nil, err
		}
		out["/"+strings.TrimSuffix(h.Name, "/")] = Entry{Header: h, Data: data}
	}
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(io.LimitReader(zr, maxBlob))
}

func readJSON(name string, v any) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return nil
}
