package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nanovox/nanovox/internal/audio/encode"
	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/server"
	"github.com/nanovox/nanovox/internal/voice"
)

type serveOptions struct {
	modelFlags
	addr, apiKey, logFormat, dataDir, modelID string
	voices                                    string
	voicesMaxStale                            time.Duration
	apiKeyFile                                string
	maxInputChars, maxStreams, queue          int
	realtime                                  bool
	maxBodyBytes                              int64
	idleWrite, shutdown, drainGrace           time.Duration
	idleRelease                               time.Duration
	prefixCacheMB, maxVoices, maxFrames       int
	defaultFormat, logLevel                   string
	sampleRate                                int
	strictParams, publicLists                 bool
	defaultVoice                              string
	voiceAliases                              []string
	bodyMemoryMB, clipDecodes, maxConns       int
	bodyTimeout                               time.Duration
}

// defaultStreams sizes the generation slots to the machine: batching makes
// several streams per core cheap.
func defaultStreams() int { return min(16, max(2, 4*runtime.NumCPU())) }

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the OpenAI-compatible speech API (POST /v1/audio/speech) over HTTP",
		Long: `serve keeps the model loaded and answers OpenAI-style speech requests,
buffered or streamed (raw PCM or SSE) while the audio is generated, for many
clients at once. Every flag can also be set with an environment variable
NANOVOX_<FLAG> (upper case, '-' as '_'), e.g. NANOVOX_API_KEY; flags win.
See docs/configuration.md.`,
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return applyEnv(cmd.Flags())
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd.Context(), cmd, o) },
	}
	f := cmd.Flags()
	o.modelFlags.register(f)
	f.StringVar(&o.addr, "addr", "127.0.0.1:8000", "listen address (host:port)")
	f.StringVar(&o.apiKey, "api-key", "", "require this key as 'Authorization: Bearer KEY' or 'x-api-key' on /v1/ endpoints (visible in ps: prefer NANOVOX_API_KEY or --api-key-file)")
	f.StringVar(&o.apiKeyFile, "api-key-file", "", "read the API key from this file (one trailing newline is dropped); excludes --api-key")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.logLevel, "log-level", "info", "lowest level logged: debug (also ignored request parameters), info, warn or error")
	f.StringVar(&o.defaultFormat, "default-format", "mp3", "response_format of requests that name none: mp3 (OpenAI's default), opus, aac, flac, wav or pcm")
	f.IntVar(&o.sampleRate, "sample-rate", 0, "output sample rate of requests that send no sample_rate, 8000–48000 Hz (default: the model's, 48000; OpenAI's pcm is 24000)")
	f.BoolVar(&o.strictParams, "strict-params", false, "answer 400 to unknown request parameters instead of ignoring them (they are listed in X-Ignored-Parameters either way)")
	f.StringVar(&o.defaultVoice, "default-voice", "", "saved voice for requests that send no voice or an OpenAI voice name (alloy, nova, …) that no --voice-alias maps")
	f.StringSliceVar(&o.voiceAliases, "voice-alias", nil, "map voice names to saved voices, e.g. alloy=anna,nova=bob (repeatable)")
	f.BoolVar(&o.publicLists, "public-lists", false, "serve GET /v1/models, /v1/audio/models and /v1/audio/voices without the API key (Open WebUI lists them without one)")
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory of saved voices (in its voices/ folder); --voices wins")
	f.StringVar(&o.voices, "voices", "", voicesFlagHelp)
	f.DurationVar(&o.voicesMaxStale, "voices-max-stale", voice.DefaultMaxStale, "with --voices s3://…: how long a voice replaced or deleted by another replica may still be served (each voice is re-checked with a conditional GET at most this often)")
	f.StringVar(&o.modelID, "model-id", "", "model id reported by /v1/models and /readyz and accepted in requests (default: the --model argument if it is a hub id, else the model directory's name)")
	f.IntVar(&o.maxInputChars, "max-input-chars", 4096, "longest accepted input text, in characters")
	f.Int64Var(&o.maxBodyBytes, "max-body-bytes", 32<<20, "largest accepted request body, in bytes")
	f.IntVar(&o.maxStreams, "max-streams", defaultStreams(), "requests generating at once")
	f.BoolVar(&o.realtime, "realtime-limit", true, "admit only as many streams as the machine steps faster than real time (learned from step times; up to --max-streams), the others wait in the queue")
	f.IntVar(&o.queue, "queue", -1, "requests that may wait for a slot before the server answers 503 (default 2 × max-streams)")
	f.DurationVar(&o.idleWrite, "idle-write-timeout", 30*time.Second, "cut off a streaming client that stops reading for this long")
	f.DurationVar(&o.shutdown, "shutdown-timeout", 60*time.Second, "how long to let in-flight requests finish on SIGINT/SIGTERM")
	f.DurationVar(&o.drainGrace, "drain-grace", 0, "on SIGINT/SIGTERM, keep accepting connections this long while /readyz and new requests answer 503 (lets a load balancer notice)")
	f.IntVar(&o.prefixCacheMB, "prefix-cache-mb", 512, "memory budget of the voice prompt-prefix cache, MiB (0 disables)")
	f.IntVar(&o.maxVoices, "max-voices", voice.DefaultMaxVoices, "most saved voices")
	f.IntVar(&o.maxFrames, "max-frames-limit", 0, "upper bound for a request's max_new_frames, frames per text chunk (default: the model's default, 375 for MOSS-TTS-Nano)")
	f.DurationVar(&o.idleRelease, "idle-release", 60*time.Second, "after this long without a request generating, drop the per-stream buffers kept for reuse (KV caches, decoder rings) so their memory can return to the system (0 keeps them)")
	f.IntVar(&o.bodyMemoryMB, "body-memory-mb", 128, "memory for request bodies read before admission, MiB: a body's declared size is reserved before it is read and requests beyond the budget wait (at least --max-body-bytes)")
	f.IntVar(&o.clipDecodes, "clip-decodes", 2, "inline reference clips decoded and held at once before the engine has encoded them (each up to about 60 MiB); further requests with a clip wait")
	f.DurationVar(&o.bodyTimeout, "body-timeout", 60*time.Second, "close the connection of a client that has not sent its whole request body this long after the server starts reading it (0: no limit)")
	f.IntVar(&o.maxConns, "max-connections", 512, "most client connections open at once; further ones are answered 503 and closed (0: no limit)")
	return cmd
}

// applyEnv sets every flag not given on the command line from
// NANOVOX_<FLAG> when that variable exists.
func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		name := "NANOVOX_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && v != "" { // empty = unset, as for NANOVOX_DATA_DIR elsewhere
			if e := fs.Set(f.Name, v); e != nil {
				err = usagef("%s=%q: %v", name, v, e)
			}
		}
	})
	return err
}

// warmPrefixes computes saved voices' prompt prefixes into the engine's
// cache, newest voice first, until the cache has no room for another.
func warmPrefixes(ctx context.Context, eng *engine.Engine, st voice.Backend, log *slog.Logger) {
	list := st.List()
	slices.SortFunc(list, func(a, b *voice.Voice) int { return b.Created.Compare(a.Created) })
	start, n := time.Now(), 0
	var last int64
	for _, v := range list {
		free := eng.PrefixCacheFree()
		if ctx.Err() != nil || free <= last {
			break
		}
		if err := eng.WarmPrefix(ctx, &engine.Voice{Codes: v.Codes, Key: "voice:" + v.Key}); err != nil {
			log.Warn("voice prefix warm-up", "voice", v.Name, "err", err)
			continue
		}
		last = free - eng.PrefixCacheFree()
		n++
	}
	if n > 0 {
		log.Info("voice prefixes warmed", "voices", n, "of", len(list), "seconds", round2(time.Since(start).Seconds()))
	}
}

func validFormat(s string) bool {
	_, err := encode.ParseFormat(s)
	return err == nil
}

// parseAliases reads --voice-alias NAME=VOICE entries.
func parseAliases(list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range list {
		from, to, ok := strings.Cut(a, "=")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || from == "" || to == "" {
			return nil, usagef("--voice-alias %q: want NAME=SAVED_VOICE", a)
		}
		out[from] = to
	}
	return out, nil
}

func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q is not supported (debug, info, warn, error)", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, usagef("--log-format %q is not supported (text, json)", format)
}

func (o *serveOptions) validate() error {
	switch {
	case !validFormat(o.defaultFormat):
		return usagef("--default-format %q is not supported (mp3, opus, aac, flac, wav, pcm)", o.defaultFormat)
	case o.sampleRate != 0 && (o.sampleRate < encode.MinSampleRate || o.sampleRate > encode.MaxSampleRate):
		return usagef("--sample-rate must be in [%d, %d] Hz, is %d", encode.MinSampleRate, encode.MaxSampleRate, o.sampleRate)
	case o.maxStreams < 1:
		return usagef("--max-streams must be at least 1, is %d", o.maxStreams)
	case o.maxInputChars < 1:
		return usagef("--max-input-chars must be positive, is %d", o.maxInputChars)
	case o.maxBodyBytes < 1024:
		return usagef("--max-body-bytes must be at least 1024, is %d", o.maxBodyBytes)
	case o.idleWrite <= 0:
		return usagef("--idle-write-timeout must be positive")
	case o.prefixCacheMB < 0:
		return usagef("--prefix-cache-mb must not be negative")
	case o.maxFrames < 0:
		return usagef("--max-frames-limit must not be negative (0: the model's default)")
	case o.maxVoices < 1:
		return usagef("--max-voices must be at least 1, is %d", o.maxVoices)
	case o.voicesMaxStale <= 0:
		return usagef("--voices-max-stale must be positive")
	case o.shutdown <= 0:
		return usagef("--shutdown-timeout must be positive")
	case o.drainGrace < 0:
		return usagef("--drain-grace must not be negative")
	case o.idleRelease < 0:
		return usagef("--idle-release must not be negative")
	case o.bodyMemoryMB < 1:
		return usagef("--body-memory-mb must be at least 1, is %d", o.bodyMemoryMB)
	case o.clipDecodes < 1:
		return usagef("--clip-decodes must be at least 1, is %d", o.clipDecodes)
	case o.bodyTimeout < 0:
		return usagef("--body-timeout must not be negative")
	case o.maxConns < 0:
		return usagef("--max-connections must not be negative")
	}
	if o.queue < 0 {
		o.queue = 2 * o.maxStreams
	}
	if o.apiKeyFile != "" {
		if o.apiKey != "" {
			return usagef("--api-key and --api-key-file exclude each other (NANOVOX_API_KEY sets --api-key)")
		}
		k, err := readKeyFile(o.apiKeyFile)
		if err != nil {
			return err
		}
		o.apiKey = k
	}
	return nil
}

// maxKeyFile bounds what --api-key-file reads, so a wrong path (a device,
// a large file) fails instead of filling memory.
const maxKeyFile = 4 << 10

// readKeyFile reads the API key of --api-key-file: the file's content
// without one trailing newline. A key on the command line is visible to
// every user in ps; a file (or a pipe) is not.
func readKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", usagef("--api-key-file: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", usagef("--api-key-file: read %s: %v", path, err)
	}
	if len(b) > maxKeyFile {
		return "", usagef("--api-key-file %s is larger than %d bytes; it must hold only the key", path, maxKeyFile)
	}
	k := strings.TrimSuffix(string(b), "\n")
	k = strings.TrimSuffix(k, "\r")
	switch {
	case k == "":
		return "", usagef("--api-key-file %s is empty", path)
	case strings.ContainsAny(k, "\r\n"):
		return "", usagef("--api-key-file %s holds more than one line; it must hold only the key", path)
	case strings.TrimSpace(k) != k:
		return "", usagef("--api-key-file %s: the key starts or ends with white space, which an HTTP header cannot carry", path)
	}
	return k, nil
}

// defaultModelID is the model id when --model-id is not given: the --model
// argument if it is a hub id, else the model directory's name (the repo id
// for a directory of the Hugging Face cache), never a path: /readyz and,
// with --public-lists, the model list show it to anyone.
func defaultModelID(model, fallback string) string {
	if !engine.IsDir(model) {
		return model
	}
	abs, err := filepath.Abs(model)
	if err != nil {
		abs = filepath.Clean(model)
	}
	// HF_HUB_CACHE/models--ORG--NAME/snapshots/REVISION
	if snaps := filepath.Dir(abs); filepath.Base(snaps) == "snapshots" {
		if repo, ok := strings.CutPrefix(filepath.Base(filepath.Dir(snaps)), "models--"); ok {
			if org, name, ok := strings.Cut(repo, "--"); ok && org != "" && name != "" {
				return org + "/" + name
			}
		}
	}
	if b := filepath.Base(abs); b != "." && b != string(filepath.Separator) {
		return b
	}
	return fallback
}

func runServe(ctx context.Context, cmd *cobra.Command, o *serveOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	log, err := newLogger(o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	// Bind first: a busy port fails before the model loads.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	defer ln.Close()
	fam, err := o.openLogged(ctx, log)
	if err != nil {
		return err
	}
	defer fam.Close()
	info := fam.Info()
	metrics := server.NewMetrics()
	eng := engine.New(fam, engine.Config{
		MaxStreams: o.maxStreams, Queue: o.queue, RealTime: o.realtime, PrefixCacheBytes: int64(o.prefixCacheMB) << 20,
		IdleRelease: o.idleRelease,
		Logger:      log, Observer: metrics,
	})
	vm := voiceModel(info)
	var voices server.Voices
	if o.dataDir != "" || o.voices != "" {
		st, _, err := openVoiceStore(ctx, o.voices, o.dataDir, voice.Options{Model: vm, MaxVoices: o.maxVoices, Logger: log, MaxStale: o.voicesMaxStale}) // the store logs skipped files
		if err != nil {
			eng.Close(ctx)
			return fmt.Errorf("voices: %w", err)
		}
		voices = st
		log.Info("voices loaded", "store", st.Location(), "count", len(st.List()))
	}
	id := o.modelID
	if id == "" {
		id = defaultModelID(o.model, info.ModelType)
	}
	format, _ := encode.ParseFormat(o.defaultFormat)
	aliases, err := parseAliases(o.voiceAliases)
	if err != nil {
		eng.Close(ctx)
		return err
	}
	srv := server.New(eng, server.Config{
		APIKey: o.apiKey, ModelID: id, Aliases: server.DefaultAliases,
		Limits:           server.Limits{MaxInputChars: o.maxInputChars, MaxBodyBytes: o.maxBodyBytes, MaxNewFrames: o.maxFrames},
		IdleWriteTimeout: o.idleWrite, Logger: log, Voices: voices, VoiceModel: vm,
		DefaultFormat: format, SampleRate: o.sampleRate, StrictParams: o.strictParams,
		DefaultVoice: o.defaultVoice, VoiceAliases: aliases, PublicLists: o.publicLists,
		BodyMemoryBytes: max(int64(o.bodyMemoryMB)<<20, o.maxBodyBytes), ClipDecodes: o.clipDecodes, BodyTimeout: bodyTimeout(o.bodyTimeout),
	}, metrics)
	metrics.ObservePrefixCache(eng.PrefixCacheStats)
	metrics.ObserveStreamLimit(eng.StreamLimit)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	var hl net.Listener = ln
	if o.maxConns > 0 {
		hl = server.LimitListener(ln, o.maxConns, metrics)
	}
	// The first request should be as fast as the hundredth: run one through
	// every stage before accepting connections (they wait in the listen
	// backlog meanwhile), then compute the saved voices' prompt prefixes
	// in the background, as many as the prefix cache holds.
	warmStart := time.Now()
	warmClip := syntheticClip(info.SampleRate, info.Channels, 1)
	if err := eng.Warm(ctx, warmClip); err != nil {
		eng.Close(context.Background())
		return fmt.Errorf("warm-up: %w", err)
	}
	log.Info("warmed up", "seconds", round2(time.Since(warmStart).Seconds()))
	if o.realtime {
		// Start the real-time limit from measured steps, not from 1: the
		// first burst after a restart is admitted as a warm server would.
		calStart := time.Now()
		c, err := eng.Calibrate(ctx, warmClip)
		if err != nil {
			eng.Close(context.Background())
			return fmt.Errorf("real-time limit calibration: %w", err)
		}
		attrs := []any{"limit", c.Limit, "max_streams", o.maxStreams, "fixed_streams", round2(c.FixedStreams), "seconds", round2(time.Since(calStart).Seconds())}
		for _, n := range slices.Sorted(maps.Keys(c.Steps)) {
			attrs = append(attrs, fmt.Sprintf("step_ms_%d", n), round2(c.Steps[n].Seconds()*1000))
		}
		log.Info("real-time limit calibrated", attrs...)
	}
	if st, ok := voices.(voice.Backend); ok {
		go warmPrefixes(ctx, eng, st, log)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(hl) }()
	log.Info("serving", "addr", ln.Addr().String(), "model", id, "max_streams", o.maxStreams, "queue", o.queue, "auth", o.apiKey != "", "gomaxprocs", runtime.GOMAXPROCS(0))

	select {
	case err := <-errc:
		eng.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	signal.Reset(os.Interrupt, syscall.SIGTERM) // a second signal kills at once
	// Graceful shutdown: stop accepting, let in-flight requests finish, then
	// release the model.
	log.Info("shutting down", "timeout", o.shutdown.String())
	srv.SetDraining()
	if o.drainGrace > 0 {
		log.Info("draining: answering 503 to new requests", "grace", o.drainGrace.String())
		time.Sleep(o.drainGrace)
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdown)
	defer cancel()
	herr := hs.Shutdown(sctx)
	if herr != nil {
		log.Warn("in-flight requests did not finish in time; cancelling them", "err", herr)
		hs.Close()
	}
	if err := eng.Close(sctx); err != nil {
		log.Warn("streams cancelled at the shutdown deadline", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// bodyTimeout maps --body-timeout to server.Config.BodyTimeout, where 0
// means the default.
func bodyTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// voiceModel identifies the codes a voice holds, so a voice saved with one
// model family/codec shape is not used with another.
func voiceModel(info engine.Info) string {
	return fmt.Sprintf("%s/%dcodes", info.ModelType, info.CodesPerFrame)
}
