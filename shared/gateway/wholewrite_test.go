package gateway

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// countingListener counts the writes to the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func TestAnAnswerTheFastPathHasWholeGoesOutInOneWrite(t *testing.T) {
	p := newTwoPaths(t, true)
	var writes atomic.Int64
	srv := httptest.NewUnstartedServer(p.handler)
	srv.Listener = WholeAnswers(srv.Config, countingListener{srv.Listener, &writes})
	srv.Start()
	defer srv.Close()
	tests := []struct {
		name, tool string
		minLength  int
		oneWrite   bool
	}{
		{"an answer longer than net/http's buffer", "fake_mid", 16 << 10, true},
		{"an answer past the bound, as net/http writes it", "fake_big", 256 << 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writes.Store(0)
			e := send(t, srv.URL+"/mcp", nil, toolsCall("1", tt.tool, "{}"))
			if e.Status != http.StatusOK || len(e.Body) < tt.minLength || !strings.HasPrefix(e.Body, "event: message\ndata: ") {
				t.Fatalf("answer %d, %d bytes: %.200s", e.Status, len(e.Body), e.Body)
			}
			if got := writes.Load(); (got == 1) != tt.oneWrite {
				t.Errorf("the answer took %d writes; want one: %v", got, tt.oneWrite)
			}
		})
	}
	if p.sdkCalls.Load() != 0 {
		t.Errorf("the go-sdk served %d of the calls; want the fast path to", p.sdkCalls.Load())
	}
}
