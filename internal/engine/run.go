package engine

import (
	"context"
	"fmt"
)

// Run steps one job alone until it is done, handing every output to emit.
// It checks ctx between steps, so cancellation takes effect within one frame.
func Run(ctx context.Context, fam Family, j Job, emit func(Output) error) error {
	st := fam.NewStepper()
	jobs := []Job{j}
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
