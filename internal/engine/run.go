package engine

import (
	"context"
	"fmt"
)

// Run steps one job alone until it is done, handing every output to emit.
// It checks ctx between steps, so cancellation takes effect within one frame.
// With a Pipeline stepper the audio of each step is rendered while the next
// step is generated, as the engine does.
func Run(ctx context.Context, fam Family, j Job, emit func(Output) error) error {
	st := fam.NewStepper()
	jobs := []Job{j}
	pl, ok := st.(Pipeline)
	if !ok {
		for !j.Done() {
			if err := ctx.Err(); err != nil {
				return err
			}
			outs, err := st.Step(jobs)
			if err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			if err := emit(outs[0]); err != nil {
				return err
			}
		}
		return nil
	}
	type result struct {
		outs []Output
		err  error
	}
	var pending any // generated, not yet rendered
	for pending != nil || !j.Done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var rendered chan result
		if pending != nil {
			rendered = make(chan result, 1)
			go func(g any) {
				outs, err := pl.Render(g)
				rendered <- result{outs, err}
			}(pending)
			pending = nil
		}
		var genErr error
		if !j.Done() {
			pending, genErr = pl.Generate(jobs)
		}
		if rendered != nil {
			r := <-rendered
			if r.err != nil {
				return fmt.Errorf("generate: %w", r.err)
			}
			if err := emit(r.outs[0]); err != nil {
				return err
			}
		}
		if genErr != nil {
			return fmt.Errorf("generate: %w", genErr)
		}
	}
	return nil
}
