package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanovox/nanovox/internal/mossnano/testmodel"
)

func newDevCmd() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Developer tools (test and benchmark checkpoints)",
	}
	var preset, layout, dtype, out string
	var seed int64
	mk := &cobra.Command{
		Use:   "mkmodel",
		Short: "Write a random-weight checkpoint in the published format (DIR/lm and DIR/codec)",
		Long: `mkmodel writes a MOSS-TTS-Nano language model and codec with seeded random
weights in the exact published on-disk format: --preset tiny for tests, or
--preset nano-100m for the shapes and config.json files of the release
(benchmarks). The result loads with --model DIR.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out DIR is required")
			}
			start := time.Now()
			if err := testmodel.Write(out, testmodel.Preset(preset), testmodel.Layout(layout), testmodel.DType(dtype), seed); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s/lm and %s/codec (%s, %s, %s, seed %d) in %.1fs\n", out, out, preset, layout, dtype, seed, time.Since(start).Seconds())
			return nil
		},
	}
	f := mk.Flags()
	f.StringVar(&preset, "preset", "tiny", "model size: tiny or nano-100m")
	f.StringVar(&layout, "layout", "openmoss", "checkpoint layout: openmoss or mlx")
	f.StringVar(&dtype, "dtype", "float32", "weight dtype: float32, bfloat16 or float16")
	f.Int64Var(&seed, "seed", 0, "random seed")
	f.StringVar(&out, "out", "", "output directory")
	dev.AddCommand(mk)
	return dev
}
