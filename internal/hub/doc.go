// Package hub resolves a model argument to a directory on disk: either a local
// directory given as is, or a Hugging Face Hub repository ("org/name[@revision]")
// fetched into, and reused from, the cache that the Python huggingface_hub library
// shares with every other tool:
//
//	$HF_HUB_CACHE (or $HF_HOME/hub, or ~/.cache/huggingface/hub)
//	└── models--{org}--{name}
//	    ├── blobs/{etag}                  file contents, named by ETag (sha256 for LFS files)
//	    ├── refs/{revision}               the commit a branch or tag pointed to
//	    ├── snapshots/{commit}/{file}     relative symlinks into blobs (copies where symlinks fail)
//	    └── trees/{commit}.json           the repository's file list at that commit
//
// Only the files a model loader needs are fetched (see [SelectFiles]). A snapshot
// that already holds them is used without touching the network; downloads resume
// from blobs/{etag}.incomplete and are verified before they are moved into place.
// The environment variables of huggingface_hub are honoured by [NewFromEnv]:
// HF_HOME, HF_HUB_CACHE, HF_ENDPOINT, HF_TOKEN (and the token file),
// HF_HUB_OFFLINE, HF_HUB_DISABLE_SYMLINKS, HF_HUB_ETAG_TIMEOUT and
// HF_HUB_DOWNLOAD_TIMEOUT.
package hub
