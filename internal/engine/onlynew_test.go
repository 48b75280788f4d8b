package engine

import "testing"

// TestOnlyNew: a step's render goes before the next generation only when
// the step carried nothing but new streams.
func TestOnlyNew(t *testing.T) {
	stream := func(stepped bool) *Stream { return &Stream{stepped: stepped} }
	for _, c := range []struct {
		name  string
		ready []*Stream
		want  bool
	}{
		{"none", nil, false},
		{"one new", []*Stream{stream(false)}, true},
		{"two new", []*Stream{stream(false), stream(false)}, true},
		{"one playing", []*Stream{stream(true)}, false},
		{"new beside playing", []*Stream{stream(false), stream(true)}, false},
		{"playing beside new", []*Stream{stream(true), stream(false)}, false},
	} {
		if got := onlyNew(c.ready); got != c.want {
			t.Errorf("%s: onlyNew = %v, want %v", c.name, got, c.want)
		}
	}
}
