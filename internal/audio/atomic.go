package audio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic creates path with the bytes write produces, all or
// nothing: it writes to a temporary file in the same directory, fsyncs it,
// renames it over path and fsyncs the directory. If write returns an error
// (for example because its context was cancelled) or panics, the temporary
// file is removed and path is untouched.
//
// The io.Writer passed to write is the *os.File itself, so a WAVWriter
// built on it can patch its header at Close. A new file gets mode 0644; an
// existing file keeps its mode.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	// Make the rename durable. Some systems cannot sync directories; the
	// file itself is complete either way.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
