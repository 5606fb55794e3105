package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/netguard"
)

// resolver answers from a table, host to the addresses of each successive
// lookup (the last repeats), as a DNS server could be made to.
type resolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	lookups map[string]int
}

func newResolver(answers map[string][][]string) *resolver {
	return &resolver{answers: answers, lookups: map[string]int{}}
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rounds, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.lookups[host], len(rounds)-1)
	r.lookups[host]++
	var addrs []netip.Addr
	for _, s := range rounds[i] {
		addrs = append(addrs, netip.MustParseAddr(s))
	}
	return addrs, nil
}

// names are the host names the tests' resolver knows.
var names = map[string][][]string{
	"example.com":          {{"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"}},
	"localhost":            {{"127.0.0.1", "::1"}},
	"metadata.test":        {{"169.254.169.254"}},
	"half-private.test":    {{"93.184.216.34", "10.0.0.5"}},
	"rebind.test":          {{"93.184.216.34"}, {"127.0.0.1"}},
	"mapped.test":          {{"::ffff:10.0.0.1"}},
	"own-endpoint.test":    {{"198.51.100.10"}},
	"resolves-to-own.test": {{"93.184.216.99"}},
}

// query is put on every URL: no error may show it.
const query = "?token=hunter2"

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy netguard.Policy
		url    string
		want   string // a substring of the error; "" for none
	}{
		{"a public host over https is allowed", netguard.Policy{}, "https://example.com/mcp", ""},
		{"a public host with a port is allowed", netguard.Policy{}, "https://example.com:8443/mcp", ""},
		{"a public IPv4 address is allowed", netguard.Policy{}, "https://93.184.216.34/", ""},
		{"a public IPv6 address is allowed", netguard.Policy{}, "https://[2606:2800:220:1::1]/", ""},
		{"a NAT64 address of a public one is allowed", netguard.Policy{}, "https://[64:ff9b::5db8:d822]/", ""},

		{"http is refused by default", netguard.Policy{}, "http://example.com/", "http URLs are not allowed"},
		{"http is allowed when the policy says so", netguard.Policy{AllowHTTP: true}, "http://example.com/", ""},
		{"ftp is refused", netguard.Policy{AllowHTTP: true}, "ftp://example.com/", `scheme "ftp"`},
		{"file is refused", netguard.Policy{AllowHTTP: true}, "file:///etc/passwd", `scheme "file"`},
		{"user information is refused", netguard.Policy{}, "https://admin:hunter2@example.com/", "user information"},
		{"a URL without a host is refused", netguard.Policy{}, "https:///mcp", "no host"},
		{"an opaque URL is refused", netguard.Policy{}, "https:example.com", "no host"},
		{"port 0 is refused", netguard.Policy{}, "https://example.com:0/", `port "0"`},
		{"port 99999 is refused", netguard.Policy{}, "https://example.com:99999/", `port "99999"`},
		{"a URL that does not parse is refused", netguard.Policy{}, "https://exa mple.com/", "does not parse"},
		{"an unknown host is refused", netguard.Policy{}, "https://nowhere.test/", "no such host"},

		{"loopback is refused", netguard.Policy{}, "https://127.0.0.1/", "loopback"},
		{"all of 127/8 is loopback", netguard.Policy{}, "https://127.8.9.10/", "loopback"},
		{"IPv6 loopback is refused", netguard.Policy{}, "https://[::1]/", "loopback"},
		{"10/8 is refused", netguard.Policy{}, "https://10.1.2.3/", "private"},
		{"172.16/12 is refused", netguard.Policy{}, "https://172.31.255.1/", "private"},
		{"192.168/16 is refused", netguard.Policy{}, "https://192.168.1.1/", "private"},
		{"the metadata service is refused", netguard.Policy{}, "https://169.254.169.254/latest/meta-data/", "link-local"},
		{"IPv6 link-local is refused", netguard.Policy{}, "https://[fe80::1]/", "link-local"},
		{"a zoned address is refused", netguard.Policy{}, "https://[fe80::1%25eth0]/", "zoned"},
		{"the IPv6 metadata service (unique-local) is refused", netguard.Policy{}, "https://[fd00:ec2::254]/", "unique-local"},
		{"CGNAT is refused", netguard.Policy{}, "https://100.64.0.1/", "carrier-grade NAT"},
		{"IPv4 multicast is refused", netguard.Policy{}, "https://224.0.0.1/", "multicast"},
		{"IPv6 multicast is refused", netguard.Policy{}, "https://[ff02::1]/", "multicast"},
		{"0.0.0.0 is refused", netguard.Policy{}, "https://0.0.0.0/", "this network"},
		{":: is refused", netguard.Policy{}, "https://[::]/", "unspecified"},
		{"broadcast is refused", netguard.Policy{}, "https://255.255.255.255/", "broadcast"},
		{"mapped metadata is refused", netguard.Policy{}, "https://[::ffff:169.254.169.254]/", "link-local"},
		{"mapped metadata in hex is refused", netguard.Policy{}, "https://[::ffff:a9fe:a9fe]/", "link-local"},
		{"mapped loopback is refused", netguard.Policy{}, "https://[::ffff:127.0.0.1]/", "loopback"},
		{"IPv4-compatible loopback is refused", netguard.Policy{}, "https://[::127.0.0.1]/", "IPv4-compatible"},
		{"NAT64 of the metadata service is refused", netguard.Policy{}, "https://[64:ff9b::a9fe:a9fe]/", "NAT64 address of a link-local"},
		{"6to4 of a private address is refused", netguard.Policy{}, "https://[2002:0a00:0001::1]/", "6to4 address of a private"},
		{"decimal IPv4 is refused", netguard.Policy{}, "https://2130706433/", "decimal, octal or hex"},
		{"hex IPv4 is refused", netguard.Policy{}, "https://0x7f000001/", "decimal, octal or hex"},
		{"dotted hex IPv4 is refused", netguard.Policy{}, "https://0x7f.0.0.1/", "decimal, octal or hex"},
		{"octal IPv4 is refused", netguard.Policy{}, "https://0177.0.0.1/", "decimal, octal or hex"},
		{"short IPv4 is refused", netguard.Policy{}, "https://127.1/", "decimal, octal or hex"},
		{"localhost is refused", netguard.Policy{}, "https://localhost/", "resolves to 127.0.0.1, a loopback"},
		{"localhost. is refused", netguard.Policy{}, "https://localhost./", "resolves to 127.0.0.1, a loopback"},
		{"a name of the metadata service is refused", netguard.Policy{}, "https://metadata.test/", "resolves to 169.254.169.254"},
		{"a name with one private address among public ones is refused", netguard.Policy{}, "https://half-private.test/", "resolves to 10.0.0.5, a private"},
		{"a name resolving to a mapped private address is refused", netguard.Policy{}, "https://mapped.test/", "private"},

		{"an allowed IP is exempt", netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}, "http://127.0.0.1:8080/mcp", ""},
		{"an allowed name is exempt, whatever its case and trailing dot", netguard.Policy{AllowedHosts: []string{"localhost"}}, "https://LocalHost.:8443/", ""},
		{"an allowed IPv6 address is exempt", netguard.Policy{AllowedHosts: []string{"::1"}}, "https://[::1]/", ""},
		{"allowing an IP does not allow a name resolving to it", netguard.Policy{AllowedHosts: []string{"127.0.0.1"}}, "https://localhost/", "loopback"},
		{"a denied host is refused", netguard.Policy{DeniedHosts: []string{"own-endpoint.test"}}, "https://own-endpoint.test/", "own endpoints"},
		{"a denied host is refused even if allowed", netguard.Policy{AllowedHosts: []string{"own-endpoint.test"}, DeniedHosts: []string{"own-endpoint.test"}}, "https://OWN-endpoint.test./", "own endpoints"},
		{"a name resolving to a denied address is refused", netguard.Policy{DeniedHosts: []string{"93.184.216.99"}}, "https://resolves-to-own.test/", "resolves to 93.184.216.99, one of this server's own endpoints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.policy
			p.Resolver = newResolver(names)
			u, err := p.CheckURL(t.Context(), tc.url+query)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckURL(%s): %v", tc.url, err)
				}
				if u.Query().Get("token") != "hunter2" {
					t.Errorf("CheckURL returned %v, not the URL parsed", u)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckURL(%s) accepted it, want a refusal saying %q", tc.url, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckURL(%s) = %q, want it to say %q", tc.url, err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the URL's secrets: %v", err)
			}
		})
	}
}

func TestRefusalsNameTheHostAndWrapErrRefused(t *testing.T) {
	p := &netguard.Policy{Resolver: newResolver(names)}
	_, err := p.CheckURL(t.Context(), "https://metadata.test/latest"+query)
	var e *netguard.Error
	if !errors.As(err, &e) || !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("CheckURL = %v, want a *netguard.Error wrapping ErrRefused", err)
	}
	want := netguard.Error{Host: "metadata.test", Reason: "it resolves to 169.254.169.254, a link-local address (the instance metadata service is 169.254.169.254)"}
	if diff := cmp.Diff(want, *e); diff != "" {
		t.Errorf("refusal mismatch (-want +got):\n%s", diff)
	}
}

func TestParseHosts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		wantErr  string
	}{
		{"an empty flag is an empty list", "", nil, ""},
		{"the local defaults", "127.0.0.1,localhost", []string{"127.0.0.1", "localhost"}, ""},
		{"spaces, case, trailing dots and brackets are normalized", " LocalHost. , [::1] ,0:0:0:0:0:0:0:1", []string{"localhost", "::1", "::1"}, ""},
		{"an empty entry is refused", "127.0.0.1,,localhost", nil, "empty entry"},
		{"a trailing comma is refused", "localhost,", nil, "empty entry"},
		{"a port is refused", "localhost:8080", nil, `host "localhost:8080"`},
		{"a scheme is refused", "http://localhost", nil, `host "http://localhost"`},
		{"a path is refused", "example.com/mcp", nil, `host "example.com/mcp"`},
		{"a decimal IPv4 spelling is refused", "2130706433", nil, `host "2130706433"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := netguard.ParseHosts(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseHosts(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHosts(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseHosts(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestNonPublic(t *testing.T) {
	for addr, want := range map[string]string{
		"8.8.8.8":              "",
		"2001:4860:4860::8888": "",
		"::ffff:8.8.8.8":       "",
		"127.0.0.1":            "a loopback address",
		"::ffff:10.0.0.1":      "a private address",
		"2002:7f00:1::":        "a 6to4 address of a loopback address",
		"2001:0:4136:e378::1":  "a Teredo address",
		"fe80::1%eth0":         "a scoped (zoned) address",
	} {
		if got := netguard.NonPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("NonPublic(%s) = %q, want %q", addr, got, want)
		}
	}
}
