package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nanovox/nanovox/internal/textnorm"
)

func newNormalizeCmd() *cobra.Command {
	var text, textFile, language, stage string
	var jsonl bool
	cmd := &cobra.Command{
		Use:   "normalize [--text TEXT | --text-file FILE | < FILE]",
		Short: "Print the text the model is given after text normalization (numbers, dates, symbols, Markdown)",
		Long: `normalize runs the text normalization that say, serve and bench apply
before a request's text is chunked (OpenMOSS's pipeline: a robust cleanup,
the language choice, the Chinese hyphen guard and the WeTextProcessing
grammars, then the cleanup again) and prints the result.

--stage robust runs the cleanup alone, --stage wetext the grammar alone (for
--language, or the language the text resolves to with auto). With --jsonl
every input line is a JSON string and every output line the JSON string of
its result, in order.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lang, err := textnorm.ParseLanguage(language)
			if err != nil {
				return usagef("--language %q: want auto, zh or en", language)
			}
			st, err := textnorm.ParseStage(stage)
			if err != nil {
				return usagef("--stage %q: want all, robust or wetext", stage)
			}
			if text != "" && textFile != "" {
				return usagef("--text and --text-file are mutually exclusive")
			}
			var in io.Reader = cmd.InOrStdin()
			switch {
			case text != "":
				in = strings.NewReader(text)
			case textFile != "":
				f, err := os.Open(textFile)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			p := textnorm.OpenMOSS()
			out := bufio.NewWriter(cmd.OutOrStdout())
			defer out.Flush()
			if !jsonl {
				b, err := io.ReadAll(in)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(out, p.Normalize(string(b), lang, st))
				return err
			}
			sc := bufio.NewScanner(in)
			sc.Buffer(make([]byte, 64<<10), 64<<20)
			for n := 1; sc.Scan(); n++ {
				var s string
				if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
					return fmt.Errorf("line %d: not a JSON string: %v", n, err)
				}
				b, _ := json.Marshal(p.Normalize(s, lang, st))
				out.Write(append(b, '\n'))
			}
			return sc.Err()
		},
	}
	f := cmd.Flags()
	f.StringVar(&text, "text", "", "text to normalize")
	f.StringVar(&textFile, "text-file", "", "read the text from this file")
	f.StringVar(&language, "language", "auto", "grammar language: auto (chosen from the text, as OpenMOSS does), zh or en")
	f.StringVar(&stage, "stage", "all", "stages: all, robust (the cleanup only) or wetext (the grammar only)")
	f.BoolVar(&jsonl, "jsonl", false, "read one JSON string per line, write one per line")
	return cmd
}
