//go:build unix

package gateway

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// connPair returns a holdingConn accepted by WholeAnswers's listener and the
// client's end of it, on loopback.
func connPair(t *testing.T) (*holdingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hl := WholeAnswers(&http.Server{}, ln)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := hl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); c.Close() })
	hc := c.(*holdingConn)
	if hc.rd.raw == nil {
		t.Fatal("a TCP connection has no file descriptor to read without waiting")
	}
	return hc, client
}

func TestReadDeadlinesTakeEffectAsTheConnectionsOwn(t *testing.T) {
	const wait = 100 * time.Millisecond
	buf := make([]byte, 16)
	t.Run("a read that finds data before the deadline gets it", func(t *testing.T) {
		c, client := connPair(t)
		client.Write([]byte("hello"))
		time.Sleep(10 * time.Millisecond) // on the server's side by now
		c.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("Read = %q, %v", buf[:n], err)
		}
		if c.rd.armed {
			t.Error("the deadline was armed for a read that did not wait")
		}
	})
	t.Run("a read that waits times out at the deadline", func(t *testing.T) {
		c, _ := connPair(t)
		start := time.Now()
		c.SetReadDeadline(start.Add(wait))
		_, err := c.Read(buf)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read = %v, want the deadline exceeded", err)
		}
		if took := time.Since(start); took < wait {
			t.Errorf("Read returned after %v, before the deadline %v", took, wait)
		}
	})
	t.Run("a read past the deadline fails though data waits", func(t *testing.T) {
		c, client := connPair(t)
		c.SetReadDeadline(time.Now().Add(wait))
		client.Write([]byte("late"))
		time.Sleep(2 * wait)
		if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read = %v, want the deadline exceeded", err)
		}
	})
	t.Run("a past deadline wakes a waiting read", func(t *testing.T) {
		c, _ := connPair(t)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		done := make(chan error, 1)
		go func() { _, err := c.Read(buf); done <- err }()
		time.Sleep(wait) // the read waits
		c.SetReadDeadline(time.Unix(1, 0))
		wantDeadlineExceeded(t, done)
	})
	t.Run("a future deadline reaches a waiting read", func(t *testing.T) {
		c, _ := connPair(t)
		done := make(chan error, 1)
		go func() { _, err := c.Read(buf); done <- err }()
		time.Sleep(wait) // the read waits, without a deadline
		c.SetReadDeadline(time.Now().Add(wait))
		wantDeadlineExceeded(t, done)
	})
	t.Run("a read of a closed connection ends", func(t *testing.T) {
		c, client := connPair(t)
		client.Close()
		time.Sleep(10 * time.Millisecond)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := c.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("Read = %d, %v, want EOF", n, err)
		}
	})
}

func TestTheHeaderTimeoutStillClosesAStalledRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), ReadHeaderTimeout: 200 * time.Millisecond}
	go srv.Serve(WholeAnswers(srv, ln))
	defer srv.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	r := bufio.NewReader(client)
	// A first request answered, then a second that stalls in its header.
	io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("first answer %q", b)
	}
	io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n")
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the server did not close the stalled connection: %v", err)
	}
	if len(rest) > 0 && !strings.HasPrefix(string(rest), "HTTP/1.1 408") {
		t.Errorf("after the stall: %q", rest)
	}
}

// wantDeadlineExceeded waits for the read that reports to done to fail with
// the deadline exceeded.
func wantDeadlineExceeded(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read = %v, want the deadline exceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read still waits")
	}
}
