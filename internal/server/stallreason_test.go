//go:build linux

package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
)

// TestStallLogsReason: a stream cut off because the client stopped reading
// is logged with the documented reason, not as "context canceled".
func TestStallLogsReason(t *testing.T) {
	var logs logBuffer
	ts := newTestServer(t, serverOpts{
		ignoreEOS: true,
		engine:    engine.Config{MaxStreams: 1},
		cfg:       Config{IdleWriteTimeout: 300 * time.Millisecond, Logger: logs.logger()},
		listener:  func(l net.Listener) net.Listener { return smallBuffers{l} },
	})
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return nil
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b := body(map[string]any{"stream": true, "max_new_frames": 300})
	fmt.Fprintf(conn, "POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	if status, err := bufio.NewReaderSize(conn, 512).ReadString('\n'); err != nil || !strings.Contains(status, "200") {
		t.Fatalf("status %q %v", status, err)
	}
	waitIdle(t, ts.eng, 20*time.Second) // the client never reads again
	out := logs.String()
	if !strings.Contains(out, `reason="client stopped reading (idle write timeout)`) {
		t.Errorf("the cut-off is not logged with its reason; log:\n%s", out)
	}
}
