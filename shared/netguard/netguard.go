// Package netguard keeps requests that a tenant can aim (a connector's base
// URL, an OAuth client's metadata document) from reaching what the server
// itself can reach: loopback, private and link-local networks (the instance
// metadata service at 169.254.169.254), the stack's own endpoints. It is the
// server-side request forgery guard of issue 12.
//
// A URL is checked twice. [Policy.CheckURL] checks it when it is registered,
// resolving its host; the [Policy.Client] that fetches it checks the address
// it actually connects to, after its own lookup, so a name that resolved to a
// public address then and to a private one now (DNS rebinding) is refused at
// connection time. The client follows a redirect only to the same host,
// ignores proxy settings from the environment, and caps response bodies.
//
//	p := &netguard.Policy{AllowedHosts: allowed} // from ParseHosts(flag)
//	u, err := p.CheckURL(ctx, baseURL)
//	...
//	resp, err := p.Client(30 * time.Second).Get(u.String())
//	...
//	body, err := io.ReadAll(resp.Body) // fails past MaxResponseBytes
//
// Errors name the host and why, never the URL's path, query or credentials;
// an error from the client's methods passes through [Redact] first, since
// net/http quotes the whole URL.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// DefaultMaxResponseBytes is the cap on a response body when
// [Policy.MaxResponseBytes] is zero: 6 MiB, a Lambda function's largest
// response, so nothing larger could be passed on anyway.
const DefaultMaxResponseBytes = 6 << 20

// Policy says which URLs may be fetched. The zero Policy allows https URLs
// whose hosts resolve only to public addresses. A Policy must not change
// once in use; it is safe for concurrent use.
type Policy struct {
	// AllowHTTP allows http:// URLs (for a laptop); otherwise only https.
	AllowHTTP bool
	// AllowedHosts are hosts (names or IP addresses) exempt from the address
	// checks, such as "127.0.0.1" and "localhost" on a laptop. A host is
	// matched as the URL spells it (case and a trailing dot aside): allowing
	// 127.0.0.1 does not allow a name that resolves to it.
	AllowedHosts []string
	// DeniedHosts are hosts always refused, allowed or not: the stack's own
	// endpoints. An IP address here is refused also when a name resolves
	// to it.
	DeniedHosts []string
	// MaxResponseBytes caps a response body read through [Policy.Client];
	// 0 means [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// EventsCapped caps a text/event-stream response per event, not as a
	// whole: each event (up to its blank line) at MaxResponseBytes, the
	// stream as long as it lasts. Set it only for a caller that reads event
	// streams event by event (the connectors' MCP transports): a caller
	// that reads a body whole would read an endless stream.
	EventsCapped bool
	// Resolver looks up the addresses of a host; nil means
	// net.DefaultResolver. Tests substitute their own.
	Resolver Resolver
}

// A Resolver returns the IP addresses of a host; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrRefused is what every refusal of a URL, redirect or address wraps.
var ErrRefused = errors.New("refused")

// Error is a refusal: the host and why. It wraps [ErrRefused].
type Error struct {
	Host   string // the host, as the URL names it
	Reason string // why, such as "it resolves to 10.0.0.5, a private address"
}

func (e *Error) Error() string {
	if e.Host == "" {
		return "netguard: refused: " + e.Reason
	}
	return fmt.Sprintf("netguard: host %s refused: %s", e.Host, e.Reason)
}

// Unwrap returns [ErrRefused].
func (e *Error) Unwrap() error { return ErrRefused }

func refuse(host, format string, args ...any) error {
	return &Error{Host: host, Reason: fmt.Sprintf(format, args...)}
}

// CheckURL validates a URL when it is registered and returns it parsed: its
// scheme is https (or http, if [Policy.AllowHTTP]); it has a host, a sane
// port (1 to 65535) and no user information (credentials go in headers); its
// host is not denied; and, unless the host is allowed, the host is a valid
// name or a canonical IP address (not a decimal, octal or hex spelling of
// one) and every address it resolves to is public ([NonPublic]).
func (p *Policy) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL
		}
		return nil, fmt.Errorf("netguard: the URL does not parse: %w", err)
	}
	host, err := p.checkShape(u)
	if err != nil {
		return nil, err
	}
	if p.allowed(host) {
		return u, nil
	}
	if err := checkHostName(host); err != nil {
		return nil, err
	}
	if _, err := p.publicAddrs(ctx, host); err != nil {
		return nil, err
	}
	return u, nil
}

// checkShape checks what can be checked of u without a lookup, and returns
// its host, normalized: scheme, user information, host and port, and that
// the host is not denied.
func (p *Policy) checkShape(u *url.URL) (string, error) {
	host := normalize(u.Hostname())
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	case u.Scheme == "http":
		return "", refuse(host, "http URLs are not allowed here; use https")
	default:
		return "", refuse(host, "scheme %q; only https is allowed", u.Scheme)
	}
	if u.User != nil {
		return "", refuse(host, "the URL holds user information; pass credentials as headers instead")
	}
	if host == "" {
		return "", refuse("", "the URL has no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", refuse(host, "port %q is not between 1 and 65535", port)
		}
	}
	if p.denied(host) {
		return "", refuse(host, "it is one of this server's own endpoints")
	}
	return host, nil
}

// publicAddrs returns the addresses of host, failing unless every one is
// public and none is denied.
func (p *Policy) publicAddrs(ctx context.Context, host string) ([]netip.Addr, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{addr}, p.checkAddr(host, addr)
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, fmt.Errorf("netguard: host %s: no such host", host)
		}
		return nil, fmt.Errorf("netguard: host %s: looking up its addresses: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("netguard: host %s: it has no addresses", host)
	}
	for _, addr := range addrs {
		if err := p.checkAddr(host, addr); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// checkAddr fails unless addr, an address of host, is public and not denied.
func (p *Policy) checkAddr(host string, addr netip.Addr) error {
	if what := NonPublic(addr); what != "" {
		if host == addr.String() {
			return refuse(host, "it is %s", what)
		}
		return refuse(host, "it resolves to %s, %s", addr, what)
	}
	if p.denied(addr.Unmap().String()) {
		return refuse(host, "it resolves to %s, one of this server's own endpoints", addr)
	}
	return nil
}

func (p *Policy) allowed(host string) bool { return containsHost(p.AllowedHosts, host) }

func (p *Policy) denied(host string) bool { return containsHost(p.DeniedHosts, host) }

func containsHost(list []string, host string) bool {
	return slices.ContainsFunc(list, func(h string) bool { return normalize(h) == host })
}

// normalize returns host as hosts are compared: lower case, without a
// trailing dot or IPv6 brackets, an IP address in its canonical form.
func normalize(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.String()
	}
	return host
}

// checkHostName fails unless host (normalized) is a canonical IP address or
// a valid DNS name whose last label is not a number: resolvers read
// "2130706433", "0x7f.1" or "0177.0.0.1" as IPv4 addresses (127.0.0.1), and
// such a spelling is refused rather than guessed at.
func checkHostName(host string) error {
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return refuse(host, "it is a scoped (zoned) address")
		}
		return nil
	}
	if len(host) > 253 {
		return refuse(host[:60]+"...", "the host name is longer than 253 characters")
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") ||
			strings.ContainsFunc(l, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') }) {
			return refuse(host, "it is not a valid host name")
		}
	}
	if last := labels[len(labels)-1]; isNumber(last) {
		return refuse(host, "it spells an IPv4 address in a decimal, octal or hex form; write it as four decimal numbers, a.b.c.d")
	}
	return nil
}

// isNumber reports whether a host name's label is a number as IPv4 parsers
// read one: decimal digits, or 0x and hex digits.
func isNumber(label string) bool {
	digits := "0123456789"
	if l := strings.ToLower(label); strings.HasPrefix(l, "0x") {
		label, digits = l[2:], "0123456789abcdef"
		if label == "" {
			return true
		}
	}
	return label != "" && strings.Trim(label, digits) == ""
}

// ParseHosts parses a comma-separated list of hosts, names or IP addresses
// (such as "127.0.0.1,localhost,::1"), as the --allow-connector-hosts flag
// and the SWITCHBOARD_CONNECTOR_ALLOWED_HOSTS variable give it. Spaces
// around entries are ignored; an empty string is an empty list. An entry
// with a scheme, port or path is refused, naming the entry.
func ParseHosts(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var hosts []string
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, errors.New("netguard: the host list has an empty entry (two commas in a row, or one at an end)")
		}
		host := normalize(entry)
		if err := checkHostName(host); err != nil {
			return nil, fmt.Errorf("netguard: host %q: give a host name or IP address, without scheme, port or path", entry)
		}
		hosts = append(hosts, host)
	}
	return hosts, nil
}
