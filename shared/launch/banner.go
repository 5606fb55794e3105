package launch

import (
	"fmt"
	"io"

	"github.com/switchboard-dev/switchboard/shared/gateway"
)

// banner tells the person who started the local server at base how to
// connect to it, in the words of the page the server shows at base.
func banner(w io.Writer, base, data string, haveKeys bool) {
	url := base + "/mcp"
	fmt.Fprintf(w, "Switchboard is serving MCP at %s (%s/ in a browser says how to connect)\n", url, base)
	fmt.Fprintf(w, "  %-29s %s (embedded table and blobs; offline summariser)\n", "data:", data)
	for _, h := range gateway.Hints(url, haveKeys) {
		if h.Then != "" {
			h.Command += "   (" + h.Then + ")"
		}
		fmt.Fprintf(w, "  %-29s %s\n", h.Host+":", h.Command)
	}
	fmt.Fprintf(w, "  %-29s %s\n", "stdio:", "go run ./functions/gateway --stdio   (for desktop hosts that launch a command)")
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}
