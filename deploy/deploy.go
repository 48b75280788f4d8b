// Package deploy defines nanovox's container image — user, files,
// entrypoint, port, environment, labels — in one place, and builds it
// without a container daemon (see package image). The Dockerfile at the
// repository's root builds the same image with Docker; this package's tests
// parse it and fail when the two differ, and validate the Kubernetes
// manifests under kubernetes/ against the Kubernetes API types and the
// nanovox binary's flags and endpoints.
//
// It is a module of its own so that the Kubernetes API types it validates
// with never become dependencies of the nanovox binary.
package deploy

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nanovox/nanovox/deploy/image"
)

// The image's user: the uid distroless and Chainguard images use for
// "nonroot", so volume permissions prepared for those fit this one.
const (
	UID      = 65532
	GID      = 65532
	UserName = "nanovox"
)

// User is the image config's User field: numeric, so that Kubernetes'
// runAsNonRoot can check it without reading /etc/passwd.
var User = fmt.Sprintf("%d:%d", UID, GID)

// Port is the port the server listens on in the image.
const Port = 8080

// ExposedPort is Port as the image config spells it.
var ExposedPort = strconv.Itoa(Port) + "/tcp"

// Paths in the image.
const (
	Binary  = "/nanovox"
	DataDir = "/data" // saved voices (DataDir/voices) and the Hugging Face cache
	CACerts = "/etc/ssl/certs/ca-certificates.crt"
)

// Entrypoint runs the server; arguments given to the container (docker run
// IMAGE ARGS, a Kubernetes container's args) are serve's flags.
var Entrypoint = []string{Binary, "serve"}

// Env is the image's environment. The listen address is set here rather
// than as default arguments because a Kubernetes container's args, or docker
// run's, replace an image's default arguments entirely, and a server that
// fell back to 127.0.0.1 would be unreachable; serve reads every flag from
// NANOVOX_<FLAG> when the flag is not given.
var Env = []string{
	"PATH=/",
	"HOME=" + DataDir,
	"NANOVOX_ADDR=0.0.0.0:" + strconv.Itoa(Port),
	"NANOVOX_DATA_DIR=" + DataDir,
	"HF_HOME=" + DataDir + "/huggingface",
}

// Source is the repository the image is built from.
const Source = "https://github.com/nanovox/nanovox"

// DefaultLicenses is the licenses label when none is given: the repository
// declares no licence yet, and SPDX's NOASSERTION says exactly that.
const DefaultLicenses = "NOASSERTION"

// Labels returns the image's OCI annotations (image-spec annotations.md).
// revision may be empty.
func Labels(version, revision, licenses string) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       "nanovox",
		"org.opencontainers.image.description": "MOSS-TTS-Nano voice-cloning text-to-speech server with an OpenAI-compatible API",
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.licenses":    licenses,
	}
	if revision != "" {
		l["org.opencontainers.image.revision"] = revision
	}
	return l
}

// Rootfs holds the files copied into the image as they are, shared with the
// Dockerfile (which COPYs them from deploy/rootfs/).
//
//go:embed rootfs
var Rootfs embed.FS

// RootfsFiles are Rootfs's files, by their path in the image.
var RootfsFiles = []string{"/etc/passwd", "/etc/group", "/etc/nsswitch.conf"}

// Spec is what varies between builds of the image.
type Spec struct {
	Version  string            // the binary's --version and the version label
	Revision string            // the VCS commit, for the revision label (optional)
	Licenses string            // SPDX expression for the licenses label
	CACerts  string            // host path of the CA bundle to copy (Debian's ca-certificates)
	Created  time.Time         // image and file times (reproducible builds: the commit's time)
	Binaries map[string]string // platform ("linux/amd64") → host path of its static nanovox
}

// Images returns one image per platform of spec.Binaries: a base layer with
// the user, the CA bundle and the writable data directory, shared by every
// platform, and a layer holding only the binary.
func Images(spec Spec) ([]*image.Image, error) {
	if len(spec.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries")
	}
	base := image.Layer{Comment: "user " + UserName + ", CA certificates, data directory", Files: []image.File{
		{Path: "/etc", Dir: true, Mode: 0o755},
		{Path: "/etc/ssl", Dir: true, Mode: 0o755},
		{Path: "/etc/ssl/certs", Dir: true, Mode: 0o755},
		{Path: CACerts, Mode: 0o644, Source: spec.CACerts},
		{Path: DataDir, Dir: true, Mode: 0o755, UID: UID, GID: GID},
		{Path: "/tmp", Dir: true, Mode: 0o777 | fs.ModeSticky},
	}}
	for _, p := range RootfsFiles {
		data, err := Rootfs.ReadFile("rootfs" + p)
		if err != nil {
			return nil, err
		}
		base.Files = append(base.Files, image.File{Path: p, Mode: 0o644, Data: data})
	}
	if _, err := os.Stat(spec.CACerts); err != nil {
		return nil, fmt.Errorf("CA certificates: %w (install Debian's ca-certificates)", err)
	}
	platforms := make([]string, 0, len(spec.Binaries))
	for p := range spec.Binaries {
		platforms = append(platforms, p)
	}
	// A stable order: index entries and so the index digest must not
	// depend on map iteration.
	slices.Sort(platforms)
	var out []*image.Image
	for _, ps := range platforms {
		p, err := image.ParsePlatform(ps)
		if err != nil {
			return nil, err
		}
		out = append(out, &image.Image{
			Platform: p,
			Created:  spec.Created,
			Layers: []image.Layer{base, {Comment: "nanovox " + spec.Version, Files: []image.File{
				{Path: Binary, Mode: 0o755, Source: spec.Binaries[ps]},
			}}},
			Config: image.Config{
				User:         User,
				ExposedPorts: map[string]struct{}{ExposedPort: {}},
				Env:          Env,
				Entrypoint:   Entrypoint,
				WorkingDir:   DataDir,
				Labels:       Labels(spec.Version, spec.Revision, spec.Licenses),
				StopSignal:   "SIGTERM",
			},
		})
	}
	return out, nil
}

// GoBuildFlags are the go build flags of the image's binary, the Dockerfile's
// included: no local paths in the binary (-trimpath), no symbol table or
// DWARF (stack traces keep their function names and lines), the version.
func GoBuildFlags(version string) []string {
	return []string{"-trimpath", "-ldflags", "-s -w -X main.version=" + version}
}

// BuildBinary builds the static nanovox binary of the repository at repo
// for linux/goarch into out (CGO_ENABLED=0: no libc in an empty image).
func BuildBinary(ctx context.Context, repo, goarch, version, out string) error {
	args := append([]string{"build"}, GoBuildFlags(version)...)
	args = append(args, "-o", out, "./cmd/nanovox")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for linux/%s: %w\n%s", goarch, err, b)
	}
	return nil
}

// RepoRoot returns the nanovox repository around dir: the nearest parent
// whose go.mod declares the main module.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/nanovox/nanovox\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no nanovox repository (go.mod of github.com/nanovox/nanovox) above %s", dir)
		}
	}
}
