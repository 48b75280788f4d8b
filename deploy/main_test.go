package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// testVersion is the version the tests build the binary with; --version
// must print it back.
const testVersion = "v0.0.0-deploytest"

// Set by TestMain: the repository root and a static linux binary built as
// the image builds it (for the host's architecture).
var (
	repoRoot      string
	binary        string
	binaryErr     error
	binaryVersion = testVersion // "" when not known
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	var err error
	if repoRoot, err = RepoRoot("."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "nanovox-deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// One build for every test of the package; the go build cache makes
	// it quick after the first run. NANOVOX_TEST_BINARY points the tests at a
	// binary built elsewhere (another branch, a release).
	if b := os.Getenv("NANOVOX_TEST_BINARY"); b != "" {
		binary, binaryVersion = b, ""
	} else if runtime.GOOS == "linux" {
		binary = filepath.Join(dir, "nanovox")
		binaryErr = BuildBinary(context.Background(), repoRoot, runtime.GOARCH, testVersion, binary)
	} else {
		binaryErr = fmt.Errorf("the image's binary is for linux; these tests run it and need a linux host")
	}
	return m.Run()
}

// needBinary returns the built binary or fails the test.
func needBinary(t *testing.T) string {
	t.Helper()
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binary
}
