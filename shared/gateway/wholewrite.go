package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// net/http writes a response through a 4 KiB connection buffer, which no
// option resizes: an answer longer than about 3.8 KiB (with its header) goes
// out in two writes, and the client wakes for each. The local server's
// connections can hold their writes while the fast path writes an answer it
// has whole, and send what they held in one write.

// maxHeldAnswer is the longest answer sent in one write; a longer one goes
// out as net/http writes it, its extra writes a small part of its cost.
const maxHeldAnswer = 64 << 10

// WholeAnswers returns ln for srv to serve the gateway on, so that each
// answer the fast path has whole, up to 64 KiB, goes out in one write. It
// sets srv's ConnContext (keeping any it had), through which the fast path
// finds a request's connection; a server that serves the gateway without it
// answers the same bytes, in more writes. ln must not be a TLS listener,
// whose connections net/http must see as they are.
func WholeAnswers(srv *http.Server, ln net.Listener) net.Listener {
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		if hc, ok := c.(*holdingConn); ok {
			ctx = context.WithValue(ctx, holdingConnKey{}, hc)
		}
		return ctx
	}
	return holdingListener{ln}
}

// holdingListener accepts holdingConns.
type holdingListener struct{ net.Listener }

func (l holdingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	hc := &holdingConn{Conn: c}
	hc.rd.raw = rawConn(c)
	return hc, nil
}

type holdingConnKey struct{}

// holdingConn is a connection whose writes can be held and sent as one.
// Only the goroutine serving the connection writes to it (net/http's
// HTTP/1 server writes from the handler's goroutine, and reads in the
// background), so hold and release need no lock.
type holdingConn struct {
	net.Conn
	held *[]byte      // what is held, while holding
	rd   readDeadline // see readdeadline.go
}

// heldBuffers hold connections' writes while they are held.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// hold makes c hold what is written to it until release.
func (c *holdingConn) hold() {
	b := heldBuffers.Get().(*[]byte)
	*b = (*b)[:0]
	c.held = b
}

// release sends what c held in one write and writes through again.
func (c *holdingConn) release() error {
	b := c.held
	c.held = nil
	_, err := c.Conn.Write(*b)
	if cap(*b) <= 2*maxHeldAnswer { // a rare long answer does not stay held
		heldBuffers.Put(b)
	}
	return err
}

func (c *holdingConn) Write(p []byte) (int, error) {
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// ReadFrom keeps the connection's own (sendfile, splice), which net/http
// uses to send files, when c holds nothing.
func (c *holdingConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok && c.held == nil {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}

// CloseWrite keeps the connection's own, with which net/http ends a
// connection it refuses more requests on while the client still sends.
func (c *holdingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writeWhole writes answer, the whole body of the response to r, and
// flushes it: in one write on a holdingConn.
func writeWhole(w http.ResponseWriter, r *http.Request, answer []byte) {
	c, _ := r.Context().Value(holdingConnKey{}).(*holdingConn)
	if c != nil && len(answer) <= maxHeldAnswer {
		c.hold()
		defer c.release()
	}
	w.Write(answer)
	// Flushing sends the answer now rather than after the handlers return,
	// which kept the client waiting for it (p50 +25 µs on loopback).
	http.NewResponseController(w).Flush()
}
