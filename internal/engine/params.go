package engine

import (
	"fmt"
	"math"
)

// A ParamError is a decoding parameter outside its range. Param is the
// parameter's name in the HTTP API (temperature, top_p, top_k,
// repetition_penalty, max_frames, max_text_tokens); the CLI and the server
// each say it in their own words.
type ParamError struct {
	Param string
	// Want describes the valid range ("in (0, 5]"), Got the value given.
	Want, Got string
}

func (e *ParamError) Error() string { return e.Param + " must be " + e.Want + ", is " + e.Got }

// The ranges Validate accepts. Wider values are either meaningless or only
// ways to burn CPU; the family's defaults are well inside them.
const (
	MaxTemperature       = 5
	MaxTopK              = 1 << 16
	MaxRepetitionPenalty = 10
)

// Validate checks every parameter against its range. It is the one check of
// the CLI, the server and bench; start from Family.DefaultParams and
// override what the user set.
func (p Params) Validate() error {
	bad := func(param, want string, got any) error {
		return &ParamError{Param: param, Want: want, Got: fmt.Sprint(got)}
	}
	switch {
	case !(p.Temperature > 0 && p.Temperature <= MaxTemperature):
		return bad("temperature", "in (0, 5]", p.Temperature)
	case !(p.TopP > 0 && p.TopP <= 1):
		return bad("top_p", "in (0, 1]", p.TopP)
	case p.TopK < 0 || p.TopK > MaxTopK:
		return bad("top_k", "in [0, 65536] (0 disables)", p.TopK)
	case !(p.RepetitionPenalty > 0 && p.RepetitionPenalty <= MaxRepetitionPenalty) || math.IsInf(p.RepetitionPenalty, 0):
		return bad("repetition_penalty", "in (0, 10]", p.RepetitionPenalty)
	case p.MaxFrames < 1:
		return bad("max_frames", "a positive integer", p.MaxFrames)
	case p.MaxTextTokens < 1:
		return bad("max_text_tokens", "a positive integer", p.MaxTextTokens)
	}
	return nil
}
