package launch

import (
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// timeouts bound how long the local HTTP server waits on a client.
type timeouts struct {
	// header: to send a request's headers.
	header time.Duration
	// read: to send the whole request, body included, from its start. Once
	// the body is read, net/http lifts the read deadline (its background
	// read, which notices a client gone, runs without one), so a call may
	// then run as long as its function may.
	read time.Duration
	// write: to take the response, from the start of the request; it must
	// outlast the longest function.
	write time.Duration
	// idle: between requests on a kept-alive connection.
	idle time.Duration
}

// localTimeouts are the local server's timeouts, so that slow or idle
// clients cannot hold connections (and their buffers) forever: a client has
// 10 s to send its headers and 30 s its whole request (the largest a call may
// have, 4.4 MB, at 150 KB/s), a kept-alive connection may idle for 2
// minutes, and a response may take as long as the longest function runs (5
// minutes for some), plus 30 s to write it.
func localTimeouts(cat *catalog.Catalog) timeouts {
	var longest time.Duration
	for _, f := range cat.Functions() {
		longest = max(longest, f.Limits.Timeout)
	}
	return timeouts{header: 10 * time.Second, read: 30 * time.Second, write: longest + 30*time.Second, idle: 2 * time.Minute}
}

// newServer returns an HTTP server for h with the timeouts t.
func newServer(h http.Handler, t timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.header,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
	}
}
