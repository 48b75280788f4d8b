// Command nanovox clones a voice from a short reference clip and speaks any
// text with MOSS-TTS-Nano: as a CLI (say), an OpenAI-compatible HTTP server
// (serve) and a benchmark (bench).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nanovox/nanovox/internal/tensor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError is a bad command line: printed without a stack of context.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "nanovox",
		Short:         "Voice cloning text-to-speech with MOSS-TTS-Nano, in one binary",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Every command of the CLI, in one place.
	root.AddCommand(
		newSayCmd(),
		newServeCmd(),
		newVoicesCmd(),
		newPullCmd(),
		newInspectCmd(),
		newNormalizeCmd(),
		newBenchCmd(),
		newDevCmd(),
	)
	return root
}

// gcPercent is the garbage collector's target unless GOGC is set: collect
// when the heap has grown 10% since the last collection. The heap is mostly
// weights and per-stream buffers (KV caches, decoder rings) that hold no
// pointers, so a collection costs a few milliseconds of one core; with Go's
// default of 100% garbage could grow to the size of everything live, which
// is what the model's memory per stream would then look like.
const gcPercent = 10

// tuneGC applies gcPercent unless the environment (getenv) sets GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// setKernels applies NANOVOX_KERNELS (avx512, avx2, neon or generic), if set:
// the SIMD kernel set to use instead of the best the CPU supports.
func setKernels(getenv func(string) string) error {
	k := getenv("NANOVOX_KERNELS")
	if k == "" {
		return nil
	}
	if err := tensor.SetKernels(k); err != nil {
		return fmt.Errorf("NANOVOX_KERNELS: %w", err)
	}
	return nil
}

func main() {
	tuneGC(os.Getenv)
	if err := setKernels(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "nanovox:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "nanovox: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "nanovox:", err)
		os.Exit(1)
	}
}
