package main

import (
	"strings"
	"testing"
)

// TestNormalizeCommand runs the real binary: stages, languages, JSONL.
func TestNormalizeCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
		code  int
	}{
		{"all stages", []string{"--text", "共465篇。"}, "", "共四百六十五篇。\n", 0},
		{"robust only", []string{"--stage", "robust", "--text", "## Hello_world -> next"}, "", "Hello world，next。\n", 0},
		{"wetext zh", []string{"--stage", "wetext", "--language", "zh", "--text", "2008-08-08"}, "", "二零零八年八月八日\n", 0},
		{"stdin", nil, "第1章", "第一章。\n", 0},
		{"jsonl", []string{"--jsonl"}, "\"第1章\"\n\"## Title\\n- item one\"\n", "\"第一章。\"\n\"Title。item one。\"\n", 0},
		{"jsonl bad line", []string{"--jsonl"}, "not json\n", "", 1},
		{"bad language", []string{"--language", "fr", "--text", "x"}, "", "", 1},
		{"bad stage", []string{"--stage", "semantic", "--text", "x"}, "", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, []byte(tc.stdin), nil, append([]string{"normalize"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			if tc.code == 0 && string(r.stdout) != tc.want {
				t.Fatalf("stdout %q, want %q", r.stdout, tc.want)
			}
			if tc.code != 0 && !strings.HasPrefix(string(r.stderr), "nanovox: ") {
				t.Fatalf("stderr %q", r.stderr)
			}
		})
	}
}
