package netguard_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/netguard"
)

// A connector's base URL is checked when it is registered; on a laptop the
// --allow-connector-hosts flag exempts local upstreams.
func ExamplePolicy_CheckURL() {
	ctx := context.Background()
	allowed, _ := netguard.ParseHosts("127.0.0.1,localhost")

	onAWS := &netguard.Policy{}
	onLaptop := &netguard.Policy{AllowHTTP: true, AllowedHosts: allowed}

	for _, raw := range []string{
		"https://169.254.169.254/latest/meta-data/",
		"https://[::ffff:10.0.0.1]/mcp",
		"https://0x7f000001/mcp",
		"http://127.0.0.1:8080/mcp?key=secret",
	} {
		_, err := onAWS.CheckURL(ctx, raw)
		fmt.Println(err)
	}
	u, err := onLaptop.CheckURL(ctx, "http://127.0.0.1:8080/mcp")
	fmt.Println(u, err)
	// Output:
	// netguard: host 169.254.169.254 refused: it is a link-local address (the instance metadata service is 169.254.169.254)
	// netguard: host ::ffff:10.0.0.1 refused: it is a private address
	// netguard: host 0x7f000001 refused: it spells an IPv4 address in a decimal, octal or hex form; write it as four decimal numbers, a.b.c.d
	// netguard: host 127.0.0.1 refused: http URLs are not allowed here; use https
	// http://127.0.0.1:8080/mcp <nil>
}
