package deploy

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nanovox/nanovox/deploy/image"
)

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	line int
	cmd  string // upper case
	args string
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, lines ending in a backslash joined.
func parseDockerfile(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(t, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(t, "\\"); ok {
			cur.WriteString(strings.TrimSpace(s) + " ")
			continue
		}
		cur.WriteString(t)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// keyValues reads K=V pairs (V optionally double-quoted) as ENV and LABEL
// take them.
func keyValues(t *testing.T, in instruction) map[string]string {
	t.Helper()
	out := map[string]string{}
	s := in.args
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || strings.ContainsAny(k, " \t") {
			t.Fatalf("line %d: %s %q: want KEY=VALUE pairs", in.line, in.cmd, s)
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				t.Fatalf("line %d: %s: %v", in.line, in.cmd, err)
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
		}
		out[k] = v
		s = rest
	}
	return out
}

// copyInstr is a COPY's flags, source and destination.
type copyInstr struct {
	from, chown, src, dst string
}

func parseCopy(t *testing.T, in instruction) copyInstr {
	t.Helper()
	var c copyInstr
	fields := strings.Fields(in.args)
	for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
		k, v, _ := strings.Cut(strings.TrimPrefix(fields[0], "--"), "=")
		switch k {
		case "from":
			c.from = v
		case "chown":
			c.chown = v
		default:
			t.Fatalf("line %d: COPY --%s is not checked by this test; teach it", in.line, k)
		}
		fields = fields[1:]
	}
	if len(fields) != 2 {
		t.Fatalf("line %d: COPY %q: want one source and one destination", in.line, in.args)
	}
	c.src, c.dst = fields[0], fields[1]
	return c
}

// TestDockerfile checks that the Dockerfile builds the image build-image
// builds: the same final config, the same files with the same owners, and
// the binary built with the same flags.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	all := parseDockerfile(string(b))
	// Stages: the final one starts at the last FROM.
	last := -1
	for i, in := range all {
		if in.cmd == "FROM" {
			last = i
		}
	}
	if last < 1 {
		t.Fatal("want a builder stage and a final stage")
	}
	if all[last].args != "scratch" {
		t.Errorf("final stage FROM %s, want scratch (an empty base, as build-image writes)", all[last].args)
	}
	build, final := all[:last], all[last+1:]

	// The binary: the builder's go build has the image builder's flags.
	var goBuild string
	for _, in := range build {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			goBuild = in.args
		}
	}
	want := GoBuildFlags("${VERSION}")
	for i, f := range want {
		if strings.Contains(f, " ") {
			want[i] = strconv.Quote(f)
		}
	}
	if !strings.Contains(goBuild, "CGO_ENABLED=0") || !strings.Contains(goBuild, strings.Join(want, " ")) || !strings.Contains(goBuild, "-o /out/nanovox ./cmd/nanovox") {
		t.Errorf("builder's go build is %q; want CGO_ENABLED=0 and %s -o /out/nanovox ./cmd/nanovox", goBuild, strings.Join(want, " "))
	}

	args := map[string]string{}
	var env, labels map[string]string
	var copies []copyInstr
	seen := map[string]instruction{}
	for _, in := range final {
		switch in.cmd {
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case "ENV":
			env = keyValues(t, in)
		case "LABEL":
			labels = keyValues(t, in)
		case "COPY":
			copies = append(copies, parseCopy(t, in))
		case "USER", "WORKDIR", "EXPOSE", "STOPSIGNAL", "ENTRYPOINT":
		default:
			t.Errorf("line %d: %s in the final stage has no counterpart in build-image", in.line, in.cmd)
		}
		if _, dup := seen[in.cmd]; dup && in.cmd != "ARG" && in.cmd != "COPY" {
			t.Errorf("line %d: second %s in the final stage", in.line, in.cmd)
		}
		seen[in.cmd] = in
	}

	// The config, field by field, against what Images writes.
	imgs, err := Images(Spec{
		Version: "${VERSION}", Revision: "${REVISION}", Licenses: "${LICENSES}",
		CACerts:  "/etc/ssl/certs/ca-certificates.crt",
		Binaries: map[string]string{"linux/amd64": os.Args[0]},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := imgs[0].Config
	if got := seen["USER"].args; got != cfg.User {
		t.Errorf("USER %q, build-image %q", got, cfg.User)
	}
	if got := seen["WORKDIR"].args; got != cfg.WorkingDir {
		t.Errorf("WORKDIR %q, build-image %q", got, cfg.WorkingDir)
	}
	if got := seen["STOPSIGNAL"].args; got != cfg.StopSignal {
		t.Errorf("STOPSIGNAL %q, build-image %q", got, cfg.StopSignal)
	}
	if got := strings.Fields(seen["EXPOSE"].args); !slices.Equal(got, slices.Sorted(maps.Keys(cfg.ExposedPorts))) {
		t.Errorf("EXPOSE %q, build-image %v", got, slices.Sorted(maps.Keys(cfg.ExposedPorts)))
	}
	var ep []string
	if err := json.Unmarshal([]byte(seen["ENTRYPOINT"].args), &ep); err != nil {
		t.Errorf("ENTRYPOINT %s: want the JSON (exec) form: %v", seen["ENTRYPOINT"].args, err)
	}
	if !slices.Equal(ep, cfg.Entrypoint) {
		t.Errorf("ENTRYPOINT %q, build-image %q", ep, cfg.Entrypoint)
	}
	wantEnv := map[string]string{}
	for _, e := range cfg.Env {
		k, v, _ := strings.Cut(e, "=")
		wantEnv[k] = v
	}
	if !maps.Equal(env, wantEnv) {
		t.Errorf("ENV %v, build-image %v", env, wantEnv)
	}
	if !maps.Equal(labels, cfg.Labels) {
		t.Errorf("LABEL %v, build-image (with the ARGs for values) %v", labels, cfg.Labels)
	}
	if args["LICENSES"] != DefaultLicenses {
		t.Errorf("ARG LICENSES=%s, build-image's default %s", args["LICENSES"], DefaultLicenses)
	}
	if _, ok := args["VERSION"]; !ok {
		t.Error("no ARG VERSION in the final stage: the version label would be empty")
	}

	// The files: every entry of build-image's layers is COPYed to the same
	// path with the same owner, except the directories COPY creates itself
	// (root-owned parents of what it copies).
	byDst := map[string]copyInstr{}
	for _, c := range copies {
		byDst[c.dst] = c
	}
	var entries []image.File
	for _, l := range imgs[0].Layers {
		entries = append(entries, l.Files...)
	}
	for _, f := range entries {
		c, ok := byDst[f.Path]
		if !ok {
			implicit := f.Dir && f.UID == 0 && f.Mode.Perm() == 0o755 && slices.ContainsFunc(entries, func(g image.File) bool {
				return strings.HasPrefix(g.Path, f.Path+"/")
			})
			if !implicit {
				t.Errorf("%s is in build-image's image but no COPY puts it there", f.Path)
			}
			continue
		}
		delete(byDst, f.Path)
		owner := ""
		if f.UID != 0 || f.GID != 0 {
			owner = strconv.Itoa(f.UID) + ":" + strconv.Itoa(f.GID)
		}
		if c.chown != owner {
			t.Errorf("COPY to %s: --chown=%q, build-image owner %q", f.Path, c.chown, owner)
		}
		switch {
		case slices.Contains(RootfsFiles, f.Path):
			if c.from != "" || c.src != path.Join("deploy/rootfs", f.Path) {
				t.Errorf("COPY to %s from %q %s, want deploy/rootfs%s from the context (build-image embeds the same file)", f.Path, c.from, c.src, f.Path)
			}
		case f.Path == CACerts:
			if c.from != "build" || c.src != CACerts {
				t.Errorf("COPY to %s from %q %s, want the builder's Debian bundle", f.Path, c.from, c.src)
			}
		case f.Path == Binary:
			if c.from != "build" || c.src != "/out/nanovox" {
				t.Errorf("COPY to %s from %q %s, want the builder's /out/nanovox", f.Path, c.from, c.src)
			}
		}
	}
	for dst := range byDst {
		t.Errorf("COPY to %s: not in build-image's image", dst)
	}
	// The builder makes /tmp sticky and world-writable, as build-image does.
	var mk string
	for _, in := range build {
		if in.cmd == "RUN" && strings.Contains(in.args, "/out/tmp") {
			mk = in.args
		}
	}
	if !strings.Contains(mk, "chmod 1777 /out/tmp") {
		t.Errorf("builder does not chmod 1777 /out/tmp: %q", mk)
	}
}

func TestParseDockerfile(t *testing.T) {
	got := parseDockerfile("# c\nFROM a AS b\n\nENV A=1 \\\n  # inside\n  B=\"x y\"\nrun echo hi\n")
	want := []instruction{{2, "FROM", "a AS b"}, {4, "ENV", `A=1 B="x y"`}, {7, "RUN", "echo hi"}}
	if !slices.Equal(got, want) {
		t.Fatalf("parseDockerfile = %+v, want %+v", got, want)
	}
	kv := keyValues(t, got[1])
	if !maps.Equal(kv, map[string]string{"A": "1", "B": "x y"}) {
		t.Errorf("keyValues = %v", kv)
	}
}
