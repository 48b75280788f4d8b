package engine

import (
	"container/list"
	"context"
	"errors"
	"sync"
)

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// prefixCache keeps voice prompt prefixes, least recently used first out,
// within a byte budget. Concurrent requests for the same missing key compute
// it once.
type prefixCache struct {
	budget int64

	mu       sync.Mutex
	used     int64
	order    *list.List // front = most recent; values *prefixEntry
	entries  map[string]*list.Element
	inflight map[string]*inflight
	gen      map[string]uint64 // bumped by Invalidate, so stale computations are dropped
	hits     uint64
	misses   uint64
}

type prefixEntry struct {
	key    string
	prefix Prefix
	bytes  int64
}

type inflight struct {
	done   chan struct{}
	prefix Prefix
	err    error
}

func newPrefixCache(budget int64) *prefixCache {
	return &prefixCache{
		budget:   budget,
		order:    list.New(),
		entries:  map[string]*list.Element{},
		inflight: map[string]*inflight{},
		gen:      map[string]uint64{},
	}
}

func (c *prefixCache) enabled() bool { return c.budget > 0 }

// get returns the cached prefix of key or computes it with compute.
// slow, if not nil, wraps the blocking parts (computing the prefix or
// waiting for another caller's computation); a hit never calls it.
//
// The first caller computes with its own ctx; the others wait for it,
// each until its own ctx is done. If the computing caller's ctx ends the
// computation (its client left), a waiter whose ctx is not done starts
// over, so one request leaving never fails another.
func (c *prefixCache) get(ctx context.Context, key string, compute func(context.Context) (Prefix, error), slow func(func())) (Prefix, error) {
	if slow == nil {
		slow = func(f func()) { f() }
	}
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			c.order.MoveToFront(el)
			c.hits++
			p := el.Value.(*prefixEntry).prefix
			c.mu.Unlock()
			return p, nil
		}
		f, ok := c.inflight[key]
		if !ok {
			break // c.mu held: compute it
		}
		c.hits++ // computed once, by the first requester
		c.mu.Unlock()
		finished := false
		slow(func() {
			select {
			case <-f.done:
				finished = true
			case <-ctx.Done():
			}
		})
		if !finished {
			return nil, ctx.Err()
		}
		if isContextErr(f.err) && ctx.Err() == nil {
			continue
		}
		return f.prefix, f.err
	}
	c.misses++
	f := &inflight{done: make(chan struct{})}
	c.inflight[key] = f
	gen := c.gen[key]
	c.mu.Unlock()

	slow(func() { f.prefix, f.err = compute(ctx) })

	c.mu.Lock()
	delete(c.inflight, key)
	if f.err == nil && c.gen[key] == gen {
		c.insert(key, f.prefix)
	}
	c.mu.Unlock()
	close(f.done)
	return f.prefix, f.err
}

// insert adds an entry and evicts old ones past the budget. c.mu held.
func (c *prefixCache) insert(key string, p Prefix) {
	b := p.Bytes()
	if b > c.budget {
		return
	}
	c.entries[key] = c.order.PushFront(&prefixEntry{key: key, prefix: p, bytes: b})
	c.used += b
	for c.used > c.budget {
		el := c.order.Back()
		c.remove(el)
	}
}

func (c *prefixCache) remove(el *list.Element) {
	e := el.Value.(*prefixEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.bytes
}

// invalidate drops key (a voice deleted or replaced).
func (c *prefixCache) invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[key]++
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
}

// stats returns entries, bytes used, hits and misses.
func (c *prefixCache) stats() (entries int, used int64, hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.used, c.hits, c.misses
}

// voiceCache keeps encoded inline reference clips by content hash, a fixed
// number of entries, least recently used out.
type voiceCache struct {
	max     int
	mu      sync.Mutex
	order   *list.List
	entries map[string]*list.Element
}

type voiceEntry struct {
	key   string
	voice *Voice
}

func newVoiceCache(max int) *voiceCache {
	return &voiceCache{max: max, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *voiceCache) get(key string) *Voice {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*voiceEntry).voice
	}
	return nil
}

func (c *voiceCache) put(key string, v *Voice) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value.(*voiceEntry).voice = v
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&voiceEntry{key: key, voice: v})
	for c.order.Len() > c.max {
		el := c.order.Back()
		c.order.Remove(el)
		delete(c.entries, el.Value.(*voiceEntry).key)
	}
}

// InvalidateVoice drops the cached prefix of a voice key (call it when a
// saved voice is deleted or replaced).
func (e *Engine) InvalidateVoice(key string) { e.prefixes.invalidate(key) }

// PrefixCacheStats reports the prefix cache's entries, bytes, hits and misses.
func (e *Engine) PrefixCacheStats() (entries int, bytes int64, hits, misses uint64) {
	return e.prefixes.stats()
}
