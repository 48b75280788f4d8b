package voice

import (
	"fmt"
	"os"
	"time"
)

// Location returns the directory holding the voice files.
func (s *Store) Location() string { return s.dir }

// Refresh reloads the directory if it changed since the last Refresh that
// did (another process added, replaced or deleted a voice). It costs a
// stat per call; the reload itself happens only on a change, and at most
// once per Options.MaxStale, so a burst of requests reloads once. A missing
// directory is an empty store and nothing to reload.
func (s *Store) Refresh() error {
	fi, err := os.Stat(s.dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("refresh voices: %w", err)
	}
	mtime := fi.ModTime().UnixNano()
	if mtime == s.dirMtime.Load() {
		return nil
	}
	now := time.Now().UnixNano()
	last := s.lastRefresh.Load()
	if now-last < int64(s.opts.MaxStale) || !s.lastRefresh.CompareAndSwap(last, now) {
		return nil
	}
	if _, err := s.Reload(); err != nil { // warnings are logged by Reload
		return err
	}
	s.dirMtime.Store(mtime)
	return nil
}
