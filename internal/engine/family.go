// Package engine runs speech generation: the model-family interface that
// every supported model implements, the scheduler that steps many streams
// together with backpressure and cancellation, and the voice prefix cache.
// The server and the CLI talk only to this package, never to a model family
// directly.
package engine

import (
	"context"
	"errors"

	"github.com/nanovox/nanovox/internal/tensor"
)

// Info describes a loaded model's output.
type Info struct {
	// Name is the model's display name (e.g. the checkpoint directory or repo id).
	Name string
	// ModelType is the config.json model_type of the family.
	ModelType string
	// SampleRate and Channels of the generated audio (48000, 2 for MOSS-TTS-Nano).
	SampleRate int
	Channels   int
	// SamplesPerFrame is the number of samples per channel one frame decodes to.
	SamplesPerFrame int
	// CodesPerFrame is the number of codes in one frame (n_vq).
	CodesPerFrame int
	// WeightBytes is the memory held by the weights.
	WeightBytes int64
	// Matmul is the arithmetic of the big matrix products the model was
	// loaded with.
	Matmul tensor.Matmul
}

// FrameDuration returns the audio duration of one frame in seconds.
func (i Info) FrameDuration() float64 { return float64(i.SamplesPerFrame) / float64(i.SampleRate) }

// Params are the decoding parameters of a request. Zero values are not
// defaults: start from Family.DefaultParams.
type Params struct {
	Greedy            bool
	Temperature       float64
	TopP              float64
	TopK              int
	RepetitionPenalty float64
	// MaxFrames caps the frames per text chunk.
	MaxFrames int
	// MaxTextTokens is the sentence-chunking budget.
	MaxTextTokens int
	Seed          uint64
	// IgnoreEOS generates exactly MaxFrames frames per chunk (benchmarks).
	IgnoreEOS bool
	// Normalize runs the family's text normalization (numbers, dates,
	// symbols, Markdown spelled out as the model was trained to hear them)
	// before the text is chunked; families that have one turn it on in
	// DefaultParams.
	Normalize bool
}

// Voice is an encoded reference clip: the codec codes of the clip.
type Voice struct {
	// Codes are the clip's frames, [frames][codes per frame].
	Codes [][]int
	// Key identifies the voice for the prefix cache: a saved voice's name and
	// version, or a content hash for an inline clip. Empty disables caching.
	Key string
}

// Prefix is a family's precomputed prompt prefix for one voice.
type Prefix interface {
	// Bytes is the memory the prefix holds, for the cache budget.
	Bytes() int64
}

// Job is one request's generation and decoding state, created by
// Family.Prepare and advanced by a Stepper. A Job is used by one goroutine
// at a time.
type Job interface {
	// Chunks returns the text chunks the job speaks.
	Chunks() []string
	// InputTokens returns the number of text tokens of the input.
	InputTokens() int
	// Done reports whether the job has produced its last output.
	Done() bool
}

// Output is what one step produced for one job.
type Output struct {
	// Samples holds channel-interleaved audio produced by the step: one
	// decoded frame, or the silence between two text chunks. It is only valid
	// until the job's next step.
	Samples []float32
	// Frame holds the codes of the frame generated in this step, if any.
	Frame []int
	// Chunk is the index of the text chunk the step worked on.
	Chunk int
	// ChunkEnd is set when the step ended a text chunk.
	ChunkEnd bool
	// Done is set on the job's last output.
	Done bool
}

// Stepper advances several jobs of one family by one step each with batched
// math. A Stepper is not safe for concurrent use; results do not depend on
// which jobs are stepped together.
type Stepper interface {
	Step(jobs []Job) ([]Output, error)
}

// Pipeline is implemented by Steppers whose step splits into generating the
// next frame of each job (Generate) and turning what Generate returned into
// audio (Render). The engine then renders step t while it generates step
// t+1, so the two run at the same time: a Pipeline must allow one Generate
// and one Render call to run concurrently (neither phase is reentrant).
// Render(Generate(jobs)) equals Step(jobs), and Render's outputs are in the
// order of the jobs given to Generate. A job's Output.Samples stay valid
// until the job's next Render.
type Pipeline interface {
	Generate(jobs []Job) (any, error)
	Render(generated any) ([]Output, error)
}

// Family is a loaded model of one family. It is safe for concurrent use.
type Family interface {
	Info() Info
	DefaultParams() Params
	// EncodeReference turns a reference clip (channel-interleaved, at
	// Info().SampleRate with Info().Channels channels) into a Voice. It
	// returns ctx's error, between stages of the encoder, once ctx is done.
	EncodeReference(ctx context.Context, pcm []float32) (*Voice, error)
	// NewPrefix precomputes the prompt prefix of a voice. It returns ctx's
	// error, between layers of the prefill, once ctx is done.
	NewPrefix(ctx context.Context, v *Voice) (Prefix, error)
	// Prepare validates a request and returns its job; prefix may be nil.
	// Preparing can take long for a long text (normalizing and splitting
	// it): Prepare checks ctx in its long loops and returns ctx's error
	// once ctx is done, so that a request whose client left frees its
	// slot at once.
	Prepare(ctx context.Context, v *Voice, prefix Prefix, text string, p Params) (Job, error)
	NewStepper() Stepper
	Close() error
}

// IdleReleaser is implemented by families that keep per-stream buffers
// (KV caches, decoder rings) for reuse: ReleaseIdle drops the idle ones so
// that their memory can go back to the system. The engine calls it once
// Config.IdleRelease has passed without a stream.
type IdleReleaser interface {
	ReleaseIdle()
}

// InputError is a request the model cannot serve as given. Servers map it
// to 400.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// IsInputError reports whether err is a client error.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
