package netguard

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrResponseTooLarge is what reading a response body past
// [Policy.MaxResponseBytes] fails with, wrapped with the host.
var ErrResponseTooLarge = errors.New("the response is larger than allowed")

// tlsHandshakeTimeout bounds a TLS handshake, as net/http's default
// transport does.
const tlsHandshakeTimeout = 10 * time.Second

// maxRedirects bounds a chain of same-host redirects, as net/http's default.
const maxRedirects = 10

// Client returns an HTTP client that fetches under p: each request's URL
// passes the checks of [Policy.CheckURL] that need no lookup, and, unless
// its host is allowed, the client looks the host up itself, checks every
// address, and connects only to a checked address (checked once more at the
// socket, by the dialer's Control), so DNS rebinding after CheckURL finds
// nothing to reach. It follows a redirect only to the same host and port
// under an allowed scheme, ignores HTTP_PROXY and the like (a proxy would
// connect on its behalf, unchecked), and fails reading a response body past
// MaxResponseBytes, or at once if the response declares a larger length.
//
// timeout bounds each request as http.Client.Timeout does, reading the body
// included; 0 means none, and the request's context bounds it. The byte cap
// counts a whole body unless [Policy.EventsCapped] caps an event stream per
// event, so that a long-lived stream of small events lasts. Each client has
// its own connection pool: build one and reuse it.
//
// It trusts the system's roots, as net/http's default client does; on Linux
// it reads them itself and parses only those a server's chain names
// ([PreloadRoots] starts reading them early).
func (p *Policy) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	// A second connection to a host resumes the first's TLS session rather
	// than repeating the whole handshake: a streamable HTTP session over
	// HTTP/1.1 opens one as soon as two of its requests overlap, such as on
	// every connector's first call.
	tlsConfig := &tls.Config{ClientSessionCache: tls.NewLRUClientSessionCache(0)}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialContext(dialer),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tlsConfig,
	}
	if indexesRoots {
		// Each connection starts from tlsConfig as net/http leaves it: with
		// h2 offered only when net/http has HTTP/2 (GODEBUG http2client).
		transport.DialTLSContext = dialTLS(transport.DialContext, tlsConfig)
	}
	return &http.Client{
		Transport:     &guard{p: p, next: transport},
		CheckRedirect: p.checkRedirect,
		Timeout:       timeout,
	}
}

// guard is the client's RoundTripper: it checks each request's URL and caps
// each response's body.
type guard struct {
	p    *Policy
	next http.RoundTripper
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	host, err := g.p.checkShape(req.URL)
	if err != nil {
		return nil, err
	}
	if !g.p.allowed(host) {
		if err := checkHostName(host); err != nil {
			return nil, err
		}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	max := g.p.maxResponseBytes()
	if g.p.EventsCapped && isEventStream(resp.Header.Get("Content-Type")) {
		resp.Body = &eventsCapped{r: resp.Body, host: host, max: max, lineStart: true}
		return resp, nil
	}
	if resp.ContentLength > max {
		resp.Body.Close()
		return nil, fmt.Errorf("netguard: host %s: %w: it declares %d bytes, at most %d are read", host, ErrResponseTooLarge, resp.ContentLength, max)
	}
	resp.Body = &capped{r: resp.Body, left: max, host: host, max: max}
	return resp, nil
}

// isEventStream reports whether a Content-Type names server-sent events.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

func (p *Policy) maxResponseBytes() int64 {
	if p.MaxResponseBytes > 0 {
		return p.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// capped is a response body that fails past its cap.
type capped struct {
	r    io.ReadCloser
	left int64 // bytes that may still be read
	host string
	max  int64
}

func (c *capped) Read(b []byte) (int, error) {
	if c.left < 0 {
		return 0, c.tooLarge()
	}
	// Read one byte past the cap, to tell a body of exactly max bytes from
	// a longer one.
	if int64(len(b)) > c.left+1 {
		b = b[:c.left+1]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	if c.left < 0 {
		return n + int(c.left), c.tooLarge()
	}
	return n, err
}

func (c *capped) tooLarge() error {
	return fmt.Errorf("netguard: host %s: %w: more than %d bytes", c.host, ErrResponseTooLarge, c.max)
}

func (c *capped) Close() error { return c.r.Close() }

// eventsCapped is an event stream's body that fails once an event holds
// more than max bytes. An event ends at a blank line; CR, LF and CRLF end
// a line (the SSE format), and line ends do not count toward its size.
type eventsCapped struct {
	r         io.ReadCloser
	host      string
	max       int64
	size      int64 // bytes of the event being read
	lineStart bool  // the last byte ended a line
	afterCR   bool  // the last byte was a CR, which an LF may complete
	err       error
}

func (e *eventsCapped) Read(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.Read(b)
	for i := 0; i < n; {
		run := bytes.IndexAny(b[i:n], "\r\n")
		if run < 0 {
			run = n - i
		}
		if run > 0 { // bytes of a line
			e.lineStart, e.afterCR = false, false
			if e.size += int64(run); e.size > e.max {
				e.err = fmt.Errorf("netguard: host %s: %w: an event of more than %d bytes", e.host, ErrResponseTooLarge, e.max)
				return i + run - int(e.size-e.max), e.err
			}
			i += run
			continue
		}
		switch c := b[i]; {
		case c == '\n' && e.afterCR: // the LF of a CRLF
			e.afterCR = false
		default:
			if e.lineStart {
				e.size = 0 // a blank line ends the event
			}
			e.lineStart, e.afterCR = true, c == '\r'
		}
		i++
	}
	return n, err
}

func (e *eventsCapped) Close() error { return e.r.Close() }

// checkRedirect is the client's CheckRedirect: a redirect stays on the
// host and port it came from, under an allowed scheme.
func (p *Policy) checkRedirect(req *http.Request, via []*http.Request) error {
	from := via[0].URL
	if len(via) >= maxRedirects {
		return refuse(normalize(from.Hostname()), "more than %d redirects", maxRedirects)
	}
	fromHost, toHost := normalize(from.Hostname()), normalize(req.URL.Hostname())
	if toHost != fromHost || port(req.URL) != port(from) {
		return refuse(fromHost, "it redirects to another host, %s; redirects are followed only on the same host", hostPort(req.URL))
	}
	if _, err := p.checkShape(req.URL); err != nil {
		return err
	}
	return nil
}

// port returns u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// hostPort returns u's host and port as an error shows them.
func hostPort(u *url.URL) string { return net.JoinHostPort(normalize(u.Hostname()), port(u)) }

// dialContext returns the transport's DialContext: an allowed host is dialed
// as it is; any other is looked up, every address checked, and the checked
// addresses dialed in turn, each checked again at the socket.
func (p *Policy) dialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h, portStr, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("netguard: dial %s: %w", addr, err)
		}
		host := normalize(h)
		if p.denied(host) {
			return nil, refuse(host, "it is one of this server's own endpoints")
		}
		if p.allowed(host) {
			return d.DialContext(ctx, network, addr)
		}
		addrs, err := p.publicAddrs(ctx, host)
		if err != nil {
			return nil, err
		}
		checked := *d
		checked.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refuse(host, "it connects to %s, which is not an address", address)
			}
			return p.checkAddr(host, ap.Addr())
		}
		var errs []error
		for _, a := range addrs {
			conn, err := checked.DialContext(ctx, network, net.JoinHostPort(a.String(), portStr))
			if err == nil {
				return conn, nil
			}
			if errors.Is(err, ErrRefused) || ctx.Err() != nil {
				return nil, err
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("netguard: host %s: %w", host, errors.Join(errs...))
	}
}

// Redact returns err with the URL net/http quotes in its errors
// ("Get \"https://host/path?token=...\": ...") cut to scheme, host and port,
// so that the error can be shown or logged without the URL's secrets.
func Redact(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	short := "(a URL that does not parse)"
	if u, perr := url.Parse(ue.URL); perr == nil {
		short = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	}
	return &url.Error{Op: ue.Op, URL: short, Err: ue.Err}
}
