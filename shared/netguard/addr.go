package netguard

import (
	"net/netip"
)

// special lists the address blocks that are not on the public internet, and
// what each is. [Policy] refuses them unless the host is allowed.
var special = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (the instance metadata service is 169.254.169.254)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique-local (private) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// Blocks whose IPv6 addresses carry an IPv4 address: the IPv4 address is
// checked as well, so that 64:ff9b::a9fe:a9fe (the metadata service behind
// NAT64) is refused.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// NonPublic returns what addr is (such as "a loopback address") if it is not
// a public unicast address, and "" if it is. An IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is judged as its IPv4 address, and so are the IPv4
// addresses inside NAT64 and 6to4 addresses.
func NonPublic(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not an address"
	}
	if addr.Zone() != "" {
		return "a scoped (zoned) address"
	}
	addr = addr.Unmap()
	for _, s := range special {
		if s.prefix.Contains(addr) {
			return s.what
		}
	}
	b := addr.As16()
	switch {
	case nat64.Contains(addr):
		if what := NonPublic(netip.AddrFrom4([4]byte(b[12:16]))); what != "" {
			return "a NAT64 address of " + what
		}
	case sixToFour.Contains(addr):
		if what := NonPublic(netip.AddrFrom4([4]byte(b[2:6]))); what != "" {
			return "a 6to4 address of " + what
		}
	}
	return ""
}
