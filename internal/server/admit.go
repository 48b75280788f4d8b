package server

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Memory before admission.
//
// A speech request's body is read, decoded and its inline clip parsed and
// resampled before it waits for a generation slot (errors must come before
// any audio, and a slot should not idle while a clip uploads), so
// --max-streams and --queue do not bound that memory. Two gates do:
//
//   - body memory (--body-memory-mb): before a body is read, its declared
//     Content-Length (or --max-body-bytes when the length is not declared)
//     is reserved from a byte budget and held until the body's buffer is
//     dropped (once the clip is parsed). The body is read into one buffer of
//     exactly that size, decoded without copies (decodeObject, clipText) and
//     the clip's base64 is decoded in place, so the reservation is the
//     memory.
//   - clip decodes (--clip-decodes): parsing and resampling a clip needs up
//     to about 4 bytes per sample of the source and of the 48 kHz stereo
//     result, whatever the size of the upload (a compressed clip expands), so
//     they are counted, not weighed: at most this many requests hold a
//     decoded clip, from parsing until the engine has encoded it.
//
// Requests wait for either gate in arrival order, for as long as their
// client waits: the body is not read yet, so a waiting request holds a
// connection and a goroutine, and connections are capped
// (--max-connections). Waiting rather than answering 503 keeps a burst of
// legitimate uploads working; a client that gives up leaves the queue.

// budget is a weighted semaphore with first-come-first-served waiters.
type budget struct {
	size int64

	mu      sync.Mutex
	used    int64
	waiters list.List // of *budgetWaiter
	// changed, if set, reports the amount in use and the number waiting.
	changed func(used int64, waiting int)
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(size int64, changed func(int64, int)) *budget {
	return &budget{size: size, changed: changed}
}

// acquire takes n (at most the whole budget, so a request larger than the
// budget runs alone) and returns what it took, waiting until that is free
// or ctx ends.
func (b *budget) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 0), b.size)
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.used+n <= b.size {
		b.used += n
		b.report()
		b.mu.Unlock()
		return n, nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	e := b.waiters.PushBack(w)
	b.report()
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.used -= n
		default:
			b.waiters.Remove(e)
		}
		b.grant()
		b.report()
		b.mu.Unlock()
		return 0, ctx.Err()
	}
}

// release returns n taken by acquire.
func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.grant()
	b.report()
	b.mu.Unlock()
}

// grant wakes waiters from the front while they fit. The lock is held.
func (b *budget) grant() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*budgetWaiter)
		if b.used+w.n > b.size {
			return
		}
		b.used += w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}

func (b *budget) report() {
	if b.changed != nil {
		b.changed(b.used, b.waiters.Len())
	}
}

// inUse returns the amount taken.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// reserveBody reserves a request body's memory from the body budget before
// it is read: its declared length, or --max-body-bytes if it declares none.
// A body declared larger than the limit gets 413 at once. ok is false when
// the request is over (answered, or its client gave up waiting); otherwise
// release must be called once the body's buffer is dropped (it may be
// called again).
func (s *Server) reserveBody(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	limit := s.cfg.Limits.MaxBodyBytes
	if r.ContentLength > limit {
		writeError(w, tooLarge("", "request body is larger than the server's limit of %d bytes", limit))
		return nil, false
	}
	need := r.ContentLength
	if need < 0 {
		need = limit
	}
	held, err := s.bodies.acquire(r.Context(), need)
	if err != nil {
		return nil, false
	}
	return func() { s.bodies.release(held); held = 0 }, true
}

// errBodyTimeout is returned by a request body not received within
// Config.BodyTimeout.
var errBodyTimeout = errors.New("request body not received in time")

// deadlineBody bounds the time a handler spends reading a request body:
// the connection's read deadline is set when the handler starts reading
// (not while it waits for the body memory budget) and cleared at the end
// of the body, so the server's background read during a long response is
// not cut. Set also when the request starts, so a body the handler never
// reads cannot hold the connection while the server discards it.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	started bool
	cut     func()
	done    bool
}

// limitBodyTime arms the body deadline of r, if it has a body.
func (s *Server) limitBodyTime(w http.ResponseWriter, r *http.Request) {
	if s.cfg.BodyTimeout <= 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: s.cfg.BodyTimeout, cut: s.metrics.bodiesCut.Inc}
}

// rearm restarts the deadline from now (after waiting for a budget).
func (d *deadlineBody) rearm() {
	if !d.done {
		d.rc.SetReadDeadline(time.Now().Add(d.timeout))
		d.started = true
	}
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	if !d.started {
		d.rearm()
	}
	n, err := d.ReadCloser.Read(p)
	if err == io.EOF && !d.done {
		d.done = true
		d.rc.SetReadDeadline(time.Time{})
	}
	var ne net.Error
	if err != nil && err != io.EOF && errors.As(err, &ne) && ne.Timeout() {
		if !d.done {
			d.done = true
			d.cut()
		}
		return n, fmt.Errorf("%w (%v)", errBodyTimeout, err)
	}
	return n, err
}

// rearmBody restarts r's body deadline, if it has one.
func rearmBody(r *http.Request) {
	if d, ok := r.Body.(*deadlineBody); ok {
		d.rearm()
	}
}

// readBody reads a whole request body of declared length n (-1: unknown)
// into one buffer, refusing more than limit bytes.
func readBody(body io.Reader, n, limit int64) ([]byte, error) {
	if n > limit {
		return nil, tooLarge("", "request body is larger than the server's limit of %d bytes", limit)
	}
	if n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, bodyError(err)
		}
		return buf, nil
	}
	buf, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, bodyError(err)
	}
	if int64(len(buf)) > limit {
		return nil, tooLarge("", "request body is larger than the server's limit of %d bytes", limit)
	}
	return buf, nil
}

func bodyError(err error) error {
	if errors.Is(err, errBodyTimeout) {
		return &apiError{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Code: str("body_timeout"),
			Message: "the request body was not received within the server's body timeout"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return badRequest("", "invalid_json", "request body is truncated JSON")
	}
	return fmt.Errorf("read request body: %w", err)
}

// LimitListener returns a listener that keeps at most n connections open:
// beyond that an accepted connection is answered "503 Service Unavailable"
// with Retry-After and closed, rather than left waiting unseen in the
// kernel's backlog, so a client learns at once that the server is full
// and the connections already open keep being served. Metrics, if not nil,
// counts open and refused connections.
func LimitListener(l net.Listener, n int, m *Metrics) net.Listener {
	ll := &limitListener{Listener: l, max: int64(n), m: m, refusing: make(chan struct{}, refusingAtOnce)}
	return ll
}

// refusingAtOnce bounds the goroutines answering refused connections;
// beyond it a refused connection is closed without an answer.
const refusingAtOnce = 64

type limitListener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	m        *Metrics
	refusing chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			l.report()
			return &limitConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		if l.m != nil {
			l.m.connsRefused.Inc()
		}
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuse(c)
			}()
		default:
			c.Close()
		}
	}
}

func (l *limitListener) report() {
	if l.m != nil {
		l.m.connsOpen.Set(float64(l.open.Load()))
	}
}

// refuse answers a connection over the cap with a 503 and closes it,
// reading what the client sent meanwhile so the close does not reset the
// connection before the client reads the answer.
func refuse(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, refusal); err != nil {
		return
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

var refusal = func() string {
	const body = `{"error":{"message":"too many connections; retry shortly","type":"server_error","param":null,"code":"server_busy"}}`
	return fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		c.l.report()
	})
	return err
}
