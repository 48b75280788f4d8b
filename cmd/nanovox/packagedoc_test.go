package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// undocumented returns the directories under root (relative, slash
// separated) whose Go package has no package doc comment in any of its
// non-test files. It skips what the go tool skips (testdata, names starting
// with "." or "_") and nested modules.
func undocumented(t *testing.T, root string) []string {
	t.Helper()
	var missing []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		files, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil {
			return err
		}
		found, documented := false, false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			found = true
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if af.Doc != nil && strings.TrimSpace(af.Doc.Text()) != "" {
				documented = true
				break
			}
		}
		if found && !documented {
			rel, _ := filepath.Rel(root, path)
			missing = append(missing, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return missing
}

// TestEveryPackageDocumented: every package of the module says what it is
// for in a package doc comment (a rule of docs/development.md's
// Conventions), so a newcomer's go doc and the package map there have
// something to show.
func TestEveryPackageDocumented(t *testing.T) {
	if missing := undocumented(t, "../.."); len(missing) > 0 {
		t.Errorf("packages without a package doc comment (add one, e.g. in doc.go): %s", strings.Join(missing, ", "))
	}
}

// TestUndocumentedFound: the check above finds a package without a doc
// comment, and only that one, whatever file the comment is in.
func TestUndocumentedFound(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("a/a.go", "// Package a is documented.\npackage a\n")
	write("b/b.go", "package b\n\n// F is documented, the package is not.\nfunc F() {}\n")
	write("b/b_test.go", "// Package b's doc in a test file does not count.\npackage b\n")
	write("c/c1.go", "package c\n")
	write("c/doc.go", "// Package c is documented in doc.go.\npackage c\n")
	write("d/d.go", "/* not a doc: a blank line follows */\n\npackage d\n")
	write("testdata/e/e.go", "package e\n")
	write("_asm/f.go", "package f\n")
	write("nested/go.mod", "module y\n")
	write("nested/g.go", "package g\n")
	if got, want := undocumented(t, root), []string{"b", "d"}; !slices.Equal(got, want) {
		t.Errorf("undocumented = %q; want %q", got, want)
	}
}
