package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/audio/encode"
	"github.com/nanovox/nanovox/internal/engine"
)

type sayOptions struct {
	modelFlags
	refAudio, voice, dataDir string
	text, textFile           string
	out, format              string
	sampleRate, bitrate      int
	speed                    float64
	channels                 int
	seed                     int64
	greedy                   bool
	temperature, topP, rep   float64
	topK                     int
	maxFrames, maxTextTokens int
	language, instruct       string
	codesOut                 string
	quiet                    bool
	noNormalize              bool
}

func newSayCmd() *cobra.Command {
	o := &sayOptions{}
	cmd := &cobra.Command{
		Use:   "say --ref-audio CLIP --text TEXT --out FILE",
		Short: "Speak text in the voice of a reference clip and write an audio file",
		Long: `say clones the voice of a short reference clip (0.5–30 s; WAV, FLAC or MP3,
any sample rate, mono or stereo) and speaks the text with it. Text comes from
--text, --text-file or standard input. The output format follows --out's
extension (.mp3, .opus/.ogg, .aac, .flac, .wav, .pcm/.raw; --format
overrides it, WAV otherwise), at 48 kHz (--sample-rate), mono by default (the
model's stereo averaged) or stereo with --channels 2, written atomically: an
error or Ctrl-C leaves no partial file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSay(cmd.Context(), cmd, o)
		},
	}
	f := cmd.Flags()
	o.modelFlags.register(f)
	f.StringVar(&o.refAudio, "ref-audio", "", "reference clip whose voice to clone (required unless --voice names a saved voice)")
	f.StringVar(&o.voice, "voice", "", "saved voice name (see 'nanovox voices')")
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory of saved voices")
	f.StringVar(&o.text, "text", "", "text to speak")
	f.StringVar(&o.textFile, "text-file", "", "read the text from this file")
	f.StringVarP(&o.out, "out", "o", "", "output file ('-' for standard output)")
	f.StringVar(&o.format, "format", "", "output format: mp3, opus, aac, flac, wav or pcm (raw 16-bit little-endian) (default: from --out's extension, else wav)")
	f.IntVar(&o.sampleRate, "sample-rate", 0, "output sample rate, 8000–48000 Hz (default: the model's, 48000)")
	f.IntVar(&o.bitrate, "bitrate", 0, "bitrate of mp3, opus and aac in bits/s (default: the codec's for speech)")
	f.Float64Var(&o.speed, "speed", 1, "speaking rate, 0.25–4 (pitch is kept)")
	f.IntVar(&o.channels, "channels", 1, "output channels: 1 (stereo averaged to mono) or 2 (native stereo)")
	f.Int64Var(&o.seed, "seed", -1, "random seed (default: random, printed)")
	f.BoolVar(&o.greedy, "greedy", false, "greedy decoding (argmax) instead of sampling")
	// Decoding parameters default to the model family's (engine.Family.DefaultParams);
	// a flag overrides only when given.
	f.Float64Var(&o.temperature, "temperature", 0, "audio sampling temperature, in (0, 5] (default: the model's, 0.8 for MOSS-TTS-Nano)")
	f.Float64Var(&o.topP, "top-p", 0, "audio nucleus sampling mass, in (0, 1] (default: the model's, 0.95)")
	f.IntVar(&o.topK, "top-k", 0, "audio top-k, 0 disables (default: the model's, 25)")
	f.Float64Var(&o.rep, "repetition-penalty", 0, "penalty on codes already generated in the chunk, in (0, 10], 1 disables (default: the model's, 1.2)")
	f.IntVar(&o.maxFrames, "max-frames", 0, "maximum frames per text chunk, 12.5 frames = 1 s (default: the model's, 375)")
	f.IntVar(&o.maxTextTokens, "max-text-tokens", 0, "text tokens per chunk when splitting long text (default: the model's, 75)")
	f.StringVar(&o.language, "language", "auto", "language (only auto: the model detects it)")
	f.StringVar(&o.instruct, "instruct", "", "style instruction (not supported by MOSS-TTS-Nano)")
	f.BoolVar(&o.noNormalize, "no-normalize", false, "speak the text as given: skip the text normalization (numbers, dates, symbols, Markdown) that runs by default as in OpenMOSS")
	f.StringVar(&o.codesOut, "codes-out", "", "also write the generated codes as JSON to this file")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}

// validate checks the flags that need no file or model, so that mistakes are
// reported before anything is loaded or written.
func (o *sayOptions) validate(cmd *cobra.Command) error {
	if o.out == "" {
		return usagef("--out FILE is required ('-' writes to standard output)")
	}
	if o.refAudio == "" && o.voice == "" {
		return usagef("--ref-audio is required: MOSS-TTS-Nano clones the voice of a reference clip (or pass --voice NAME for a saved voice)")
	}
	if o.refAudio != "" && o.voice != "" {
		return usagef("--ref-audio and --voice are mutually exclusive")
	}
	if o.instruct != "" {
		return usagef("--instruct is not supported: MOSS-TTS-Nano takes no style instructions (the reference clip sets the voice and style)")
	}
	if l := strings.ToLower(strings.TrimSpace(o.language)); l != "auto" && l != "" {
		return usagef("--language %q is not supported: only auto (the model speaks the language of the text)", o.language)
	}
	if _, err := o.outputFormat(); err != nil {
		return err
	}
	if o.sampleRate != 0 && (o.sampleRate < encode.MinSampleRate || o.sampleRate > encode.MaxSampleRate) {
		return usagef("--sample-rate must be in [%d, %d] Hz, is %d", encode.MinSampleRate, encode.MaxSampleRate, o.sampleRate)
	}
	if !(o.speed >= encode.MinSpeed && o.speed <= encode.MaxSpeed) {
		return usagef("--speed must be in [%g, %g], is %v", encode.MinSpeed, encode.MaxSpeed, o.speed)
	}
	if err := checkOut(o.out); err != nil {
		return err
	}
	if o.channels != 1 && o.channels != 2 {
		return usagef("--channels must be 1 or 2, is %d", o.channels)
	}
	// The overrides are checked now, before anything is loaded, over a
	// neutral base; the model's defaults are applied after loading.
	neutral := engine.Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, MaxFrames: 1, MaxTextTokens: 1}
	o.applyParams(cmd, &neutral)
	if err := neutral.Validate(); err != nil {
		return paramUsage(err)
	}
	if o.text != "" && o.textFile != "" {
		return usagef("--text and --text-file are mutually exclusive")
	}
	return nil
}

// outputFormat is --format, else the format --out's extension names, else
// WAV.
func (o *sayOptions) outputFormat() (encode.Format, error) {
	if o.format != "" {
		f, err := encode.ParseFormat(strings.ToLower(o.format))
		if err != nil {
			return 0, usagef("--format %q is not supported (mp3, opus, aac, flac, wav, pcm)", o.format)
		}
		return f, nil
	}
	if f, ok := encode.FormatForPath(o.out); ok {
		return f, nil
	}
	return encode.WAV, nil
}

// checkOut reports, before anything is loaded, an --out that cannot be
// written: a directory, or a file in a directory that does not exist or
// does not let us create the temporary file the output is written to.
func checkOut(path string) error {
	if path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("--out %s is a directory; give a file name", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return usagef("--out %s: directory %s does not exist", path, dir)
	}
	if !fi.IsDir() {
		return usagef("--out %s: %s is not a directory", path, dir)
	}
	f, err := os.CreateTemp(dir, ".nanovox-check-*")
	if err != nil {
		return usagef("--out %s: cannot write in %s: %v", path, dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// paramFlags maps the engine's parameter names to say's flags.
var paramFlags = map[string]string{
	"temperature": "temperature", "top_p": "top-p", "top_k": "top-k",
	"repetition_penalty": "repetition-penalty", "max_frames": "max-frames", "max_text_tokens": "max-text-tokens",
}

// applyParams overrides p with the decoding flags given on the command line.
func (o *sayOptions) applyParams(cmd *cobra.Command, p *engine.Params) {
	changed := cmd.Flags().Changed
	if changed("temperature") {
		p.Temperature = o.temperature
	}
	if changed("top-p") {
		p.TopP = o.topP
	}
	if changed("top-k") {
		p.TopK = o.topK
	}
	if changed("repetition-penalty") {
		p.RepetitionPenalty = o.rep
	}
	if changed("max-frames") {
		p.MaxFrames = o.maxFrames
	}
	if changed("max-text-tokens") {
		p.MaxTextTokens = o.maxTextTokens
	}
}

// paramUsage words an engine.ParamError as a flag error.
func paramUsage(err error) error {
	var pe *engine.ParamError
	if errors.As(err, &pe) {
		return usagef("--%s must be %s, is %s", paramFlags[pe.Param], pe.Want, pe.Got)
	}
	return err
}

// readText returns the text from --text, --text-file or standard input.
func (o *sayOptions) readText(stdin io.Reader) (string, error) {
	var t string
	switch {
	case o.text != "":
		t = o.text
	case o.textFile != "":
		b, err := os.ReadFile(o.textFile)
		if err != nil {
			return "", fmt.Errorf("--text-file: %w", err)
		}
		t = string(b)
	default:
		if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return "", usagef("no text: pass --text, --text-file or pipe the text to standard input")
		}
		b, err := io.ReadAll(io.LimitReader(stdin, 16<<20))
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		t = string(b)
	}
	if strings.TrimSpace(t) == "" {
		return "", usagef("the text is empty")
	}
	return t, nil
}

func runSay(ctx context.Context, cmd *cobra.Command, o *sayOptions) error {
	stderr := cmd.ErrOrStderr()
	if err := o.validate(cmd); err != nil {
		return err
	}
	text, err := o.readText(cmd.InOrStdin())
	if err != nil {
		return err
	}
	// The reference clip is decoded and checked before the model loads.
	var ref *audio.Reference
	var saved *engine.Voice
	var savedModel string
	if o.refAudio != "" {
		data, err := os.ReadFile(o.refAudio)
		if err != nil {
			return fmt.Errorf("--ref-audio: %w", err)
		}
		ref, err = audio.PrepareReference(data, audio.Options{})
		if err != nil {
			return fmt.Errorf("--ref-audio %s: %w", o.refAudio, err)
		}
	} else {
		saved, savedModel, err = loadSavedVoice(o.dataDir, o.voice)
		if err != nil {
			return err
		}
	}
	log := stderr
	if o.quiet {
		log = io.Discard
	}
	fam, err := o.open(ctx, log)
	if err != nil {
		return err
	}
	defer fam.Close()
	info := fam.Info()
	if saved != nil && savedModel != voiceModel(info) {
		return fmt.Errorf("--voice %q was saved for %q, but this model is %q; save it again with 'nanovox voices add --replace'", o.voice, savedModel, voiceModel(info))
	}

	start := time.Now()
	voice := saved
	if ref != nil {
		voice, err = fam.EncodeReference(ctx, ref.Interleaved())
		if err != nil {
			return fmt.Errorf("--ref-audio %s: %w", o.refAudio, err)
		}
	}
	p := fam.DefaultParams()
	p.Greedy = o.greedy
	if o.noNormalize {
		p.Normalize = false
	}
	o.applyParams(cmd, &p)
	if err := p.Validate(); err != nil {
		return paramUsage(err)
	}
	if o.seed >= 0 {
		p.Seed = uint64(o.seed)
	} else {
		p.Seed = uint64(time.Now().UnixNano())
		if !o.greedy {
			fmt.Fprintf(log, "seed %d\n", p.Seed)
		}
	}
	job, err := fam.Prepare(ctx, voice, nil, text, p)
	if err != nil {
		return err
	}
	chunks := job.Chunks()
	prog := newProgress(stderr, len(chunks), !o.quiet)

	var codes codesFile
	codes.TextChunks = chunks
	codes.FramesPerChunk = make([]int, len(chunks))
	format, _ := o.outputFormat()
	var samples int64 // per channel, at the model's rate
	write := func(w io.Writer) error {
		out, err := encode.NewOutput(w, encode.OutputOptions{
			Format: format, InRate: info.SampleRate, InChannels: info.Channels, Channels: o.channels,
			SampleRate: o.sampleRate, Bitrate: o.bitrate, Speed: o.speed,
		})
		if err != nil {
			return err
		}
		err = engine.Run(ctx, fam, job, func(eo engine.Output) error {
			if eo.Frame != nil {
				codes.Frames = append(codes.Frames, append([]int(nil), eo.Frame...))
				codes.FramesPerChunk[eo.Chunk]++
			}
			if eo.ChunkEnd {
				prog.chunkDone(eo.Chunk + 1)
			}
			if len(eo.Samples) == 0 {
				return nil
			}
			samples += int64(len(eo.Samples) / info.Channels)
			return out.Write(eo.Samples)
		})
		if err != nil {
			return err
		}
		if len(codes.Frames) == 0 {
			return errors.New("the model generated no audio (it chose to stop at once); try another --seed or --greedy")
		}
		return out.Close()
	}
	if o.out == "-" {
		err = write(cmd.OutOrStdout())
	} else {
		err = audio.WriteFileAtomic(o.out, write)
	}
	prog.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return context.Canceled
		}
		return err
	}
	wall := time.Since(start)
	if o.codesOut != "" {
		b, err := json.Marshal(codes)
		if err != nil {
			return err
		}
		if err := audio.WriteFileAtomic(o.codesOut, func(w io.Writer) error {
			_, err := w.Write(append(b, '\n'))
			return err
		}); err != nil {
			return err
		}
	}
	dur := float64(samples) / float64(info.SampleRate) / o.speed
	rtf := math.Inf(1)
	if dur > 0 {
		rtf = wall.Seconds() / dur
	}
	fmt.Fprintf(log, "wrote %s: %.2fs of audio in %.2fs (RTF %.3f), %d chunk(s), %d frames\n",
		o.out, dur, wall.Seconds(), rtf, len(chunks), len(codes.Frames))
	return nil
}

// codesFile is the --codes-out JSON.
type codesFile struct {
	Frames         [][]int  `json:"frames"`
	FramesPerChunk []int    `json:"frames_per_chunk"`
	TextChunks     []string `json:"text_chunks"`
}

// progress draws "chunk i/n, ETA" on stderr when it is a terminal.
type progress struct {
	w     io.Writer
	total int
	on    bool
	start time.Time
}

func newProgress(w io.Writer, total int, enabled bool) *progress {
	on := false
	if f, ok := w.(*os.File); ok && enabled && total > 1 {
		on = term.IsTerminal(int(f.Fd()))
	}
	p := &progress{w: w, total: total, on: on, start: time.Now()}
	p.draw(0)
	return p
}

func (p *progress) draw(done int) {
	if !p.on {
		return
	}
	const width = 30
	fill := width * done / p.total
	eta := "--"
	if done > 0 {
		el := time.Since(p.start)
		eta = (el * time.Duration(p.total-done) / time.Duration(done)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r[%s%s] chunk %d/%d  ETA %s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, p.total, eta)
}

func (p *progress) chunkDone(done int) { p.draw(done) }

func (p *progress) finish() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
