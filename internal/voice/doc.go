// Package voice is nanovox's saved-voice store: the codec codes of a
// reference clip, saved once under a name and used by that name in later
// requests (voice: "name" in the HTTP API, nanovox say --voice NAME).
//
// Two stores implement [Backend]: [Store], a directory of voice files, and
// [BucketStore], the same files as objects in an S3-compatible bucket
// ([Bucket]; package s3store connects one) shared by several servers. The
// rest of this comment describes the directory store; BucketStore's doc
// says where the bucket store differs (conditional creates instead of a
// lock, and a cache whose staleness is bounded by Options.MaxStale).
//
// A Store lives in a data directory and keeps one file per voice,
// DIR/voices/<name>.voice. Every file is read and checked by [Open] and
// [Store.Reload]; a file that is corrupt, truncated, foreign, from a newer
// nanovox or over a limit is skipped with a [Warning], and the other voices
// still load. Other files in the directory are ignored. Only regular files
// are read: a voice file that is a symbolic link is skipped, not followed,
// so a link cannot make the store read outside its directory, and a FIFO or
// device is refused without being waited on.
//
// # Names
//
// A voice name is 1–64 ASCII letters, digits, '.', '_' or '-', starting with
// a letter or digit, without ".." and not ending in '.'. Names are
// case-sensitive, but two names that differ only in case cannot both be
// added (they would be one file on macOS and Windows). Windows device names
// (con, prn, aux, nul, com0–com9, lpt0–lpt9, in any case and with any
// extension) are reserved. See [ValidName].
//
// # File format (version 1)
//
// All integers are little-endian.
//
//	offset   size       field
//	0        8          magic "NVXVOICE"
//	8        4          format version, uint32 (1)
//	12       4          metadata length M, uint32, 2..65536
//	16       M          metadata: one UTF-8 JSON object (below)
//	16+M     2·F·C      codes: uint16, frame-major (frame 0 codebook 0,
//	                    frame 0 codebook 1, …), F frames of C codebooks
//	end-32   32         SHA-256 of every byte before it
//
// The metadata object has these keys; readers ignore keys they do not know,
// so optional fields can be added without a version change:
//
//	name                string  the voice name; must match the file name
//	created             string  RFC 3339 time, UTC ("2025-01-02T03:04:05.123Z")
//	model               string  identity of the codec that made the codes,
//	                            e.g. "moss-audio-tokenizer-nano/16x1024"
//	frames              int     F, 1..the frame limit
//	codebooks           int     C, 1..64 codes per frame
//	duration_s          number  duration of the source clip in seconds
//	source_sample_rate  int     sample rate of the source clip (0 = unknown)
//	source_channels     int     channels of the source clip (0 = unknown)
//	source_format       string  container of the source clip ("wav", "flac", …)
//	ref_text            string  transcript of the clip; stored, never used
//
// A reader checks, in order: the magic, the version (a newer version is
// reported as such, not as corruption), the lengths against the file size,
// the checksum, then the metadata and codes. The file size is bounded before
// anything is read, so no declared length can make a reader allocate more
// than the file.
//
// # Versions and keys
//
// Every loaded voice has a Key, name + "@" + 16 hex digits of the file's
// SHA-256. The key changes whenever the voice is replaced, and is the same
// in every process that reads the same file, so a cache of prompt prefixes
// can be keyed on it; [Options.OnChange] reports keys that went stale.
//
// # Concurrency and several processes
//
// A Store is safe for concurrent use. [Store.Get] and [Store.List] return
// shared snapshots that never change: a replace or delete makes a new
// snapshot and leaves the old one to whoever holds it. Callers must not
// modify a Voice they got from the store.
//
// Several processes may use one directory (a server and the nanovox voices
// command). Writes are atomic: a temporary file in the same directory,
// fsync, rename, fsync of the directory, so readers see a whole file or
// none. Writers take an advisory lock on DIR/voices/.lock, so "add unless it
// exists" and the voice limit hold across processes, and leftover temporary
// files (".tmp-*") are removed only while that lock is free. A Store's
// in-memory view changes only through its own writes and [Store.Reload];
// a server picks up voices added by another process by calling Reload.
package voice
