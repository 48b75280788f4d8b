package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/hub"
	"github.com/nanovox/nanovox/internal/mossnano/lm"
	"github.com/nanovox/nanovox/internal/weights"
)

// defaultCodec is the codec repository of the release.
const defaultCodec = "OpenMOSS-Team/MOSS-Audio-Tokenizer-Nano"

// newHubClient returns a hub client configured from the environment, with a
// progress bar on log when it is a terminal.
func newHubClient(log io.Writer) (*hub.Client, func()) {
	c := hub.NewFromEnv()
	finish := func() {}
	if f, ok := log.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := hub.NewProgressBar(log)
		c.Progress = bar.Update
		finish = bar.Finish
	}
	return c, finish
}

// hubResolver resolves hub ids through the Hugging Face cache, downloading
// what is missing.
func hubResolver(log io.Writer) func(ctx context.Context, id string) (string, error) {
	return func(ctx context.Context, id string) (string, error) {
		c, finish := newHubClient(log)
		dir, err := c.Resolve(ctx, id)
		finish()
		return dir, err
	}
}

func newPullCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pull [MODEL...]",
		Short: "Download models from the Hugging Face Hub into the local cache ahead of time",
		Long: `pull downloads the files nanovox loads (config.json, tokenizer.model, the
weights and their shards) into the standard Hugging Face cache ($HF_HUB_CACHE,
$HF_HOME/hub or ~/.cache/huggingface/hub), where Python tools find them too.
Without arguments it pulls the default model and codec. HF_ENDPOINT selects a
mirror, HF_TOKEN authenticates, HF_HUB_OFFLINE=1 only checks the cache.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{defaultModel, defaultCodec}
			}
			log := cmd.ErrOrStderr()
			for _, id := range args {
				repo, rev, err := hub.ParseRepoID(id)
				if err != nil {
					return err
				}
				c, finish := newHubClient(log)
				dir, err := c.Download(cmd.Context(), repo, rev)
				finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", id, dir)
			}
			return nil
		},
	}
}

func newInspectCmd() *cobra.Command {
	var codec string
	cmd := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "Show what would be loaded from a model (files, dtypes, parameters, config) without loading weights",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log := cmd.ErrOrStderr()
			f, parts, err := engine.Locate(ctx, args[0], engine.OpenOptions{Codec: codec, Resolve: hubResolver(log)})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "model type: %s\n", f.ModelType)
			for _, p := range parts {
				if err := inspectDir(w, p.Role, p.Dir); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&codec, "codec", "", "codec directory or repo id (default: as the model says)")
	return cmd
}

// inspectDir prints a checkpoint directory's files, tensor dtypes and
// parameter counts, reading only the safetensors headers.
func inspectDir(w io.Writer, what, dir string) error {
	fmt.Fprintf(w, "\n%s: %s\n", what, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && !e.IsDir() {
			fmt.Fprintf(w, "  %-40s %10.1f MiB\n", e.Name(), float64(fi.Size())/(1<<20))
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		fmt.Fprintf(w, "  config: %s\n", configSummary(b))
	}
	st, err := weights.Open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	byType := map[weights.DType]int64{}
	var total, ignored int64
	for _, n := range st.Names() {
		t := st.Tensor(n)
		k := int64(t.NumElements())
		byType[t.DType] += k
		total += k
		if lm.Unloaded(n) {
			ignored += k
		}
	}
	var types []string
	for d, k := range byType {
		types = append(types, fmt.Sprintf("%s %.2fM", d, float64(k)/1e6))
	}
	sort.Strings(types)
	fmt.Fprintf(w, "  tensors: %d from %s; parameters %.2fM (%s)\n", len(st.Names()), strings.Join(st.Files(), ", "), float64(total)/1e6, strings.Join(types, ", "))
	if ignored > 0 {
		fmt.Fprintf(w, "  of which %.2fM are tied head copies / dead weights that are not loaded\n", float64(ignored)/1e6)
	}
	return nil
}

// configSummary picks the interesting fields of a config.json.
func configSummary(b []byte) string {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "unreadable: " + err.Error()
	}
	var parts []string
	pick := func(src map[string]any, keys ...string) {
		for _, k := range keys {
			if v, ok := src[k]; ok {
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
		}
	}
	pick(m, "model_type", "n_vq", "audio_vocab_size", "local_transformer_layers", "sampling_rate", "number_channels", "downsample_rate", "code_dim", "dtype")
	if g, ok := m["gpt2_config"].(map[string]any); ok {
		pick(g, "n_layer", "n_embd", "n_head", "n_inner", "vocab_size", "position_embedding_type")
	}
	if q, ok := m["quantizer_kwargs"].(map[string]any); ok {
		pick(q, "num_quantizers", "codebook_size")
	}
	return strings.Join(parts, " ")
}
