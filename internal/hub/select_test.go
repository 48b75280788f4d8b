package hub

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSelectFiles(t *testing.T) {
	indexes := map[string][]string{
		"model.safetensors.index.json": {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"},
		"pytorch_model.bin.index.json": {"pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"},
	}
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
		err   error
	}{
		{"single safetensors",
			[]string{"README.md", "config.json", "model.safetensors", "tokenizer.model", "modeling.py", "onnx/model.onnx", "pytorch_model.bin"},
			[]string{"config.json", "tokenizer.model", "model.safetensors"}, nil},
		{"no tokenizer (codec)",
			[]string{"config.json", "model.safetensors", ".gitattributes"},
			[]string{"config.json", "model.safetensors"}, nil},
		{"safetensors preferred over its index",
			[]string{"config.json", "model.safetensors", "model.safetensors.index.json", "model-00001-of-00002.safetensors"},
			[]string{"config.json", "model.safetensors"}, nil},
		{"sharded safetensors",
			[]string{"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "__init__.py"},
			[]string{"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}, nil},
		{"any top-level safetensors, sorted",
			[]string{"config.json", "weights.safetensors", "audio.safetensors", "sub/extra.safetensors", "pytorch_model.bin"},
			[]string{"config.json", "audio.safetensors", "weights.safetensors"}, nil},
		{"pytorch bin",
			[]string{"config.json", "pytorch_model.bin", "tokenizer.model", "README.md"},
			[]string{"config.json", "tokenizer.model", "pytorch_model.bin"}, nil},
		{"sharded pytorch bin",
			[]string{"config.json", "pytorch_model.bin.index.json", "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"},
			[]string{"config.json", "pytorch_model.bin.index.json", "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"}, nil},
		{"no config", []string{"model.safetensors"}, nil, ErrNoConfig},
		{"config in a subfolder only", []string{"sub/config.json", "model.safetensors"}, nil, ErrNoConfig},
		{"no weights", []string{"config.json", "tokenizer.model", "model.onnx", "sub/model.safetensors"}, nil, ErrNoWeights},
		{"empty", nil, nil, ErrNoConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			got, err := SelectFiles(tc.files, func(name string) ([]string, error) {
				calls++
				return indexes[name], nil
			})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("SelectFiles = %q, %v; want %q", got, err, tc.want)
			}
			if calls > 1 {
				t.Errorf("readIndex called %d times", calls)
			}
		})
	}
}

func TestSelectFilesIndexProblems(t *testing.T) {
	files := []string{"config.json", "model.safetensors.index.json"}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		shards []string
		err    error
		want   string
	}{
		{"read error is wrapped", nil, boom, "boom"},
		{"no shards", []string{}, nil, "lists no shards"},
		{"unsafe shard", []string{"../../etc/passwd"}, nil, "invalid shard name"},
		{"absolute shard", []string{"/etc/passwd"}, nil, "invalid shard name"},
	} {
		_, err := SelectFiles(files, func(string) ([]string, error) { return tc.shards, tc.err })
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.err != nil && !errors.Is(err, tc.err)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseIndex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{`{"metadata":{"total_size":10},"weight_map":{"a":"m-2.safetensors","b":"m-1.safetensors","c":"m-2.safetensors"}}`,
			[]string{"m-1.safetensors", "m-2.safetensors"}, ""},
		{`{"weight_map":{"a":"sub/m.safetensors"}}`, []string{"sub/m.safetensors"}, ""},
		{`{"weight_map":{}}`, nil, "no weight_map"},
		{`{}`, nil, "no weight_map"},
		{`{"weight_map":{"a":1}}`, nil, "parse index"},
		{`{"weight_map":["a"]}`, nil, "parse index"},
		{`{"weight_map":{"a":"../x.safetensors"}}`, nil, "invalid file name"},
		{`{"weight_map":{"a":"/x.safetensors"}}`, nil, "invalid file name"},
		{`{"weight_map":{"a":""}}`, nil, "invalid file name"},
		{`{"weight_map":{"a":"a\\b"}}`, nil, "invalid file name"},
		{`{"weight_map":{"a":"x\u0000y"}}`, nil, "invalid file name"},
		{`[`, nil, "parse index"},
		{``, nil, "parse index"},
		{`null`, nil, "no weight_map"},
	} {
		got, err := ParseIndex([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseIndex(%s) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseIndex(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseIndex(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"total_size":10},"weight_map":{"a":"m-2.safetensors","b":"m-1.safetensors"}}`,
		`{"weight_map":{"a":"../../../etc/passwd"}}`, `{"weight_map":{"a":"C:\\x"}}`, `{"weight_map":{"a":"."}}`,
		`{"weight_map":{"a":"a//b"}}`, `{"weight_map":null}`, `{"weight_map":{"a":"\u00ff\ud800"}}`, `[]`, `"x"`, `{`,
		`{"weight_map":{"a":"x","a":"y"}}`, `{"Weight_Map":{"a":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		shards, err := ParseIndex(data)
		if err != nil {
			return
		}
		if len(shards) == 0 || !slices.IsSorted(shards) {
			t.Fatalf("shards %q", shards)
		}
		for i, s := range shards {
			if !validFileName(s) || (i > 0 && shards[i-1] == s) {
				t.Fatalf("bad or duplicate shard %q", s)
			}
		}
		files := append([]string{"config.json", "model.safetensors.index.json"}, shards...)
		got, err := SelectFiles(files, func(string) ([]string, error) { return shards, nil })
		if err != nil || len(got) < 3 || got[0] != "config.json" {
			t.Fatalf("SelectFiles on a parsed index: %q, %v", got, err)
		}
	})
}
