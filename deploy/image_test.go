package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nanovox/nanovox/deploy/image"
)

// TestImage builds the image around the real binary, reads it back from
// the OCI layout as a runtime would, checks its config and files, and runs
// the binary taken out of its layer.
func TestImage(t *testing.T) {
	if raceEnabled {
		// Nothing here runs concurrently; the test runs without -race.
		t.Skip("compressing the binary under the race detector takes a minute")
	}
	bin := needBinary(t)
	platform := "linux/" + runtime.GOARCH
	imgs, err := Images(Spec{
		Version: testVersion, Revision: "0123456789abcdef", Licenses: "Apache-2.0",
		CACerts: "/etc/ssl/certs/ca-certificates.crt", Created: time.Unix(1796000000, 0),
		Binaries: map[string]string{platform: bin},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := image.WriteLayout(dir, "nanovox:test", imgs); err != nil {
		t.Fatal(err)
	}
	p, _ := image.ParsePlatform(platform)
	r, err := image.ReadLayout(dir, "nanovox:test", p)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config.Config

	// The config, against literal values: a change of the image's contract
	// (user, entrypoint, port) must show up here as well as in deploy.go.
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532 (non-root, numeric for runAsNonRoot)", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/nanovox", "serve"}) || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint %q, Cmd %q; want [/nanovox serve] and no Cmd", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts = %v, want 8080/tcp", c.ExposedPorts)
	}
	if !slices.Contains(c.Env, "NANOVOX_ADDR=0.0.0.0:8080") {
		t.Errorf("Env %q does not make serve listen on 0.0.0.0:8080", c.Env)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/nanovox/nanovox",
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.revision": "0123456789abcdef",
	} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	if len(r.Layers) != 2 {
		t.Fatalf("%d layers, want 2 (base, binary)", len(r.Layers))
	}

	// The base layer: the user, a CA bundle equal to the build machine's,
	// a data directory the user can write.
	base, err := image.Files(r.Layers[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(base["/etc/passwd"].Data), "nanovox:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nanovox user with uid 65532:\n%s", base["/etc/passwd"].Data)
	}
	if !strings.Contains(string(base["/etc/group"].Data), "nanovox:x:65532:") {
		t.Errorf("/etc/group has no nanovox group 65532:\n%s", base["/etc/group"].Data)
	}
	host, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatal(err)
	}
	if certs := base["/etc/ssl/certs/ca-certificates.crt"].Data; !bytes.Equal(certs, host) || !bytes.Contains(certs, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("CA bundle in the image (%d bytes) differs from the host's (%d bytes)", len(certs), len(host))
	}
	if d := base["/data"].Header; d == nil || d.Uid != 65532 || d.Gid != 65532 || d.Mode&0o700 != 0o700 {
		t.Errorf("/data is not a directory the user 65532 can write: %+v", d)
	}
	if tmp := base["/tmp"].Header; tmp == nil || tmp.Mode != 0o1777 {
		t.Errorf("/tmp: %+v, want mode 1777", tmp)
	}

	// The binary layer holds the entrypoint; run it.
	files, err := image.Files(r.Layers[1])
	if err != nil {
		t.Fatal(err)
	}
	e, ok := files[c.Entrypoint[0]]
	if !ok || len(files) != 1 {
		t.Fatalf("binary layer holds %d files, not just %s", len(files), c.Entrypoint[0])
	}
	if e.Header.Mode&0o555 != 0o555 {
		t.Errorf("%s mode %o: not executable by every user", c.Entrypoint[0], e.Header.Mode)
	}
	if !bytes.HasPrefix(e.Data, []byte("\x7fELF")) {
		t.Fatalf("%s is not an ELF binary", c.Entrypoint[0])
	}
	extracted := filepath.Join(t.TempDir(), "nanovox")
	if err := os.WriteFile(extracted, e.Data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(extracted, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", c.Entrypoint[0], err, out)
	}
	if want := "nanovox version " + binaryVersion; !strings.HasPrefix(string(out), want) || binaryVersion != "" && strings.TrimSpace(string(out)) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	// Static: an empty image has no dynamic loader.
	if bytes.Contains(e.Data, []byte("/lib64/ld-linux")) || bytes.Contains(e.Data, []byte("/lib/ld-linux")) {
		t.Error("the binary names a dynamic loader: it was not built with CGO_ENABLED=0")
	}
}
