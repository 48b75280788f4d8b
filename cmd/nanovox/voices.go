package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/voice"
	"github.com/nanovox/nanovox/internal/voice/s3store"
)

// loadSavedVoice reads a saved voice for `say --voice`.
func loadSavedVoice(dataDir, name string) (*engine.Voice, string, error) {
	st, warns, err := voice.Open(dataDir, voice.Options{})
	if err != nil {
		return nil, "", err
	}
	_ = warns
	v, err := st.Get(name)
	if errors.Is(err, voice.ErrNotFound) {
		return nil, "", fmt.Errorf("--voice %q: no saved voice by that name in %s; MOSS-TTS-Nano has no preset voices: pass --ref-audio CLIP, or save one with 'nanovox voices add %s CLIP'", name, dataDir, name)
	}
	if err != nil {
		return nil, "", fmt.Errorf("--voice %q: %w", name, err)
	}
	return &engine.Voice{Codes: v.Codes, Key: "voice:" + v.Key}, v.Model, nil
}

// voicesFlagHelp describes --voices for serve and voices.
const voicesFlagHelp = "where saved voices are kept: s3://BUCKET/PREFIX (S3-compatible object storage shared by replicas; endpoint, region and credentials from the AWS_* variables and config files) or a directory holding the .voice files (default: DATA-DIR/voices)"

// voiceOpenTimeout bounds opening a voice store: loading the AWS
// configuration and the first listing of a bucket.
const voiceOpenTimeout = 60 * time.Second

// openVoiceStore opens the store --voices names (an s3:// URL, or a
// directory of voice files), or without it the data directory's store.
func openVoiceStore(ctx context.Context, spec, dataDir string, o voice.Options) (voice.Backend, []voice.Warning, error) {
	switch {
	case s3store.IsURL(spec):
		ctx, cancel := context.WithTimeout(ctx, voiceOpenTimeout)
		defer cancel()
		return s3store.Open(ctx, spec, o)
	case strings.Contains(spec, "://"):
		return nil, nil, usagef("--voices %q: only s3:// URLs and directories are supported", spec)
	case spec != "":
		return voice.OpenDir(spec, o)
	}
	return voice.Open(dataDir, o)
}

func newVoicesCmd() *cobra.Command {
	var dataDir, voicesAt string
	cmd := &cobra.Command{
		Use:   "voices",
		Short: "Manage saved voices (add, ls, rm) in the store a server also uses (the data directory, or --voices)",
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", defaultDataDir(), "directory of saved voices (in its voices/ folder); --voices wins")
	cmd.PersistentFlags().StringVar(&voicesAt, "voices", "", voicesFlagHelp)

	var mf modelFlags
	var refText string
	var replace bool
	add := &cobra.Command{
		Use:   "add NAME CLIP",
		Short: "Encode a reference clip once and save it as a voice",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, file := args[0], args[1]
			if err := voice.ValidName(name); err != nil {
				return usagef("%v", err)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			ref, err := audio.PrepareReference(data, audio.Options{})
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			st, warns, err := openVoiceStore(cmd.Context(), voicesAt, dataDir, voice.Options{})
			if err != nil {
				return err
			}
			for _, w := range warns {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w.String())
			}
			if _, err := st.Get(name); err == nil && !replace {
				return fmt.Errorf("voice %q already exists in %s (use --replace)", name, st.Location())
			}
			fam, err := mf.open(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer fam.Close()
			ev, err := fam.EncodeReference(cmd.Context(), ref.Interleaved())
			if err != nil {
				return err
			}
			_, err = st.Add(voice.Voice{
				Name: name, Model: voiceModel(fam.Info()), Codes: ev.Codes, RefText: refText,
				Duration: ref.Duration().Seconds(), SourceRate: ref.SourceRate, SourceChannels: ref.SourceChannels, SourceFormat: ref.SourceFormat,
			}, replace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "saved voice %q (%.2f s, %d frames) in %s\n", name, ref.Duration().Seconds(), len(ev.Codes), st.Location())
			return nil
		},
	}
	mf.register(add.Flags())
	add.Flags().StringVar(&refText, "ref-text", "", "transcript of the clip (stored, not used by the model)")
	add.Flags().BoolVar(&replace, "replace", false, "replace an existing voice of that name")

	ls := &cobra.Command{
		Use:   "ls",
		Short: "List saved voices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, warns, err := openVoiceStore(cmd.Context(), voicesAt, dataDir, voice.Options{})
			if err != nil {
				return err
			}
			for _, w := range warns {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w.String())
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDURATION\tFRAMES\tCREATED\tMODEL")
			for _, v := range st.List() {
				fmt.Fprintf(tw, "%s\t%.2fs\t%d\t%s\t%s\n", v.Name, v.Duration, v.Frames(), v.Created.Local().Format(time.DateTime), v.Model)
			}
			return tw.Flush()
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME...",
		Short: "Delete saved voices",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := openVoiceStore(cmd.Context(), voicesAt, dataDir, voice.Options{})
			if err != nil {
				return err
			}
			for _, name := range args {
				if _, err := st.Delete(name); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted voice %q\n", name)
			}
			return nil
		},
	}
	cmd.AddCommand(add, ls, rm)
	return cmd
}
