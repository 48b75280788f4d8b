// Command build-image builds nanovox's container image without a container
// daemon or registry: it cross-compiles the static binary for each platform
// and writes an OCI image layout (and, with -tar, a tarball for docker
// load) as package deploy defines the image.
//
//	cd deploy && go run ./cmd/build-image -out ../dist/oci -tar ../dist/nanovox.tar
//
// Push the layout with any OCI tool, e.g. skopeo copy oci:dist/oci:nanovox:TAG
// docker://REGISTRY/nanovox:TAG, or crane push dist/oci REGISTRY/nanovox:TAG.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nanovox/nanovox/deploy"
	"github.com/nanovox/nanovox/deploy/image"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

type binaryFlags map[string]string

func (b binaryFlags) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binaryFlags) Set(s string) error {
	p, path, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return fmt.Errorf("%q: want PLATFORM=PATH, e.g. linux/amd64=./nanovox", s)
	}
	if _, err := image.ParsePlatform(p); err != nil {
		return err
	}
	b[p] = path
	return nil
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build-image", flag.ContinueOnError)
	var (
		repo      = fs.String("repo", "", "nanovox repository to build (default: the one around the working directory)")
		out       = fs.String("out", "", "write an OCI image layout to this directory")
		tarFile   = fs.String("tar", "", "write a docker load tarball of -tar-platform to this file")
		tarPlat   = fs.String("tar-platform", "linux/amd64", "platform of the -tar tarball")
		platforms = fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms to build")
		version   = fs.String("version", "", "version of the binary and the label (default: git describe)")
		tag       = fs.String("tag", "", "image name in the layout and the tarball (default nanovox:VERSION)")
		licenses  = fs.String("licenses", deploy.DefaultLicenses, "SPDX licence expression for the org.opencontainers.image.licenses label")
		caCerts   = fs.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put in the image (Debian's ca-certificates)")
		binaries  = binaryFlags{}
	)
	fs.Var(binaries, "binary", "use this prebuilt static binary for a platform instead of building it: PLATFORM=PATH (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" && *tarFile == "" {
		return errors.New("nothing to write: give -out DIR and/or -tar FILE")
	}
	root := *repo
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if root, err = deploy.RepoRoot(wd); err != nil {
			return err
		}
	}
	if *version == "" {
		*version = gitOutput(root, "describe", "--tags", "--always", "--dirty")
		if *version == "" {
			*version = "dev"
		}
	}
	if *tag == "" {
		*tag = "nanovox:" + strings.ReplaceAll(*version, "+", "-")
	}
	spec := deploy.Spec{
		Version: *version, Revision: gitOutput(root, "rev-parse", "HEAD"), Licenses: *licenses,
		CACerts: *caCerts, Created: created(root), Binaries: map[string]string{},
	}
	tmp, err := os.MkdirTemp("", "nanovox-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	want := strings.Split(*platforms, ",")
	if *out == "" {
		want = []string{*tarPlat} // the tarball alone needs one binary
	}
	for _, ps := range want {
		p, err := image.ParsePlatform(strings.TrimSpace(ps))
		if err != nil {
			return err
		}
		if p.OS != "linux" {
			return fmt.Errorf("platform %s: the image is for linux", p)
		}
		if path, ok := binaries[p.String()]; ok {
			spec.Binaries[p.String()] = path
			continue
		}
		bin := filepath.Join(tmp, "nanovox-"+p.Architecture)
		start := time.Now()
		if err := deploy.BuildBinary(ctx, root, p.Architecture, *version, bin); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "built %s in %.1fs\n", p, time.Since(start).Seconds())
		spec.Binaries[p.String()] = bin
	}
	imgs, err := deploy.Images(spec)
	if err != nil {
		return err
	}
	if *out != "" {
		d, err := image.WriteLayout(*out, *tag, imgs)
		if err != nil {
			return fmt.Errorf("write %s: %w", *out, err)
		}
		fmt.Printf("%s\t%s\t%s\n", *out, *tag, d.Digest)
	}
	if *tarFile != "" {
		var img *image.Image
		for _, i := range imgs {
			if i.Platform.String() == *tarPlat {
				img = i
			}
		}
		if img == nil {
			return fmt.Errorf("-tar-platform %s is not among the platforms built", *tarPlat)
		}
		if err := image.WriteDockerArchive(*tarFile, *tag, img); err != nil {
			return fmt.Errorf("write %s: %w", *tarFile, err)
		}
		fmt.Printf("%s\t%s\t%s (docker load -i %s)\n", *tarFile, *tag, *tarPlat, *tarFile)
	}
	return nil
}

// created is the image's time: $SOURCE_DATE_EPOCH if set, else the commit's
// time, so that rebuilding a commit gives the same digests.
func created(repo string) time.Time {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		s = gitOutput(repo, "log", "-1", "--format=%ct")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC()
	}
	return time.Unix(0, 0).UTC()
}

func gitOutput(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
