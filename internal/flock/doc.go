// Package flock takes exclusive advisory locks on open files (flock on Unix,
// LockFileEx on Windows) without blocking, so that several processes sharing
// a directory — the Hugging Face cache, the voice store — serialize their
// writes. Where the platform has no such lock, TryLock always succeeds. Lock
// adds the exclusion among goroutines of one process and a cancellable wait.
package flock
