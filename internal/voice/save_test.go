package voice

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSaveReturnsSaved: Save returns the voice it stored, key and defaults
// filled in, even while a second store on the same directory deletes it and
// the first one reloads (where a Get after the save could miss it).
func TestSaveReturnsSaved(t *testing.T) {
	dir := t.TempDir()
	a := openT(t, dir, Options{Model: testModel})
	b := openT(t, dir, Options{Model: testModel})
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			b.Delete("sh2") // ErrNotFound most of the time
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			a.Reload()
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	prev := ""
	for i := range 40 {
		v := testVoice("sh2", 2+i%3, 16, i)
		v.Model, v.Created = "", v.Created.AddDate(0, 0, i)
		saved, _, err := a.Save(v, true)
		if err != nil {
			t.Fatalf("Save %d: %v", i, err)
		}
		if saved == nil || saved.Name != "sh2" || saved.Frames() != 2+i%3 || saved.Model != testModel ||
			!strings.HasPrefix(saved.Key, "sh2@") || saved.Key == prev || !saved.Created.Equal(v.Created) {
			t.Fatalf("Save %d returned %+v", i, saved)
		}
		prev = saved.Key
	}
}
