package gateway

import (
	"sync"
	"syscall"
	"time"
)

// The local server's timeouts (launch: header, read, idle) make net/http
// set a connection's read deadline several times a request. The runtime's
// network poller sleeps until its earliest timer, so each future deadline
// set while a thread waits in it, as one does between requests, wakes that
// thread: an eventfd write, a thread woken, an epoll and a futex, a request.
// A holdingConn arms a future read deadline only when a read would wait for
// data: a read that finds data at once, before the deadline, needs none. A
// deadline takes effect at the same instant as before: a read after it
// fails at once, a read that waits is woken at it.

// readDeadline is a holdingConn's read deadline, as net/http set it.
type readDeadline struct {
	raw     syscall.RawConn // nil: deadlines go through at once
	mu      sync.Mutex
	pending time.Time // set and not armed; zero if none
	armed   bool      // the connection has a deadline
	reading bool      // a read is waiting on the connection
}

// SetReadDeadline implements [net.Conn]: a deadline in the future, on a
// connection without one that no read waits on, waits for a read to need it.
func (c *holdingConn) SetReadDeadline(t time.Time) error {
	d := &c.rd
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending = time.Time{}
	if d.raw != nil && !t.IsZero() && !d.armed && !d.reading && time.Now().Before(t) {
		d.pending = t
		return nil
	}
	d.armed = !t.IsZero()
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline implements [net.Conn].
func (c *holdingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

// Read implements [net.Conn]: with a deadline pending, it reads what is
// there without waiting, and arms the deadline only to wait.
func (c *holdingConn) Read(p []byte) (int, error) {
	d := &c.rd
	d.mu.Lock()
	pending := d.pending
	d.mu.Unlock()
	if !pending.IsZero() && len(p) > 0 && time.Now().Before(pending) {
		if n, err, ok := c.readNow(p); ok {
			return n, err
		}
	}
	d.mu.Lock()
	if !d.pending.IsZero() {
		d.armed = true
		if err := c.Conn.SetReadDeadline(d.pending); err != nil {
			d.mu.Unlock()
			return 0, err
		}
		d.pending = time.Time{}
	}
	d.reading = true
	d.mu.Unlock()
	n, err := c.Conn.Read(p)
	d.mu.Lock()
	d.reading = false
	d.mu.Unlock()
	return n, err
}
