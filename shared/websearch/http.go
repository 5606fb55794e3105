package websearch

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/netguard"
)

// UserAgent is what the backends send as User-Agent.
const UserAgent = "Switchboard-WebSearch/1 (+https://github.com/switchboard-dev/switchboard)"

// DefaultRetryAfter is the wait a 429 without a usable Retry-After asks for.
const DefaultRetryAfter = 30 * time.Second

// Answer is a backend's HTTP answer, its body read whole.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Send sends req with client and reads the answer's body, up to
// [MaxBodyBytes]; a longer body, or no answer, is a [fault.KindUnavailable]
// error naming backend (never the URL, which may carry a key or the query).
func Send(client *http.Client, req *http.Request, backend string) (Answer, error) {
	req.Header.Set("User-Agent", UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, fault.Unavailable(netguard.Redact(err), "%s could not be reached: %v", backend, netguard.Redact(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return Answer{}, fault.Unavailable(netguard.Redact(err), "%s: reading its answer failed: %v", backend, netguard.Redact(err))
	}
	if len(body) > MaxBodyBytes {
		return Answer{}, fault.Unavailable(nil, "%s answered more than %d bytes", backend, MaxBodyBytes)
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// RateLimited returns the error of a backend that answered 429: its
// Retry-After (seconds, or an HTTP date) becomes the error's, or
// [DefaultRetryAfter] when it sent none that can be read.
func (a Answer) RateLimited(backend string, now time.Time) error {
	wait := DefaultRetryAfter
	if v := strings.TrimSpace(a.Header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			wait = time.Duration(min(n, 86400)) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			wait = min(max(t.Sub(now), 0), 24*time.Hour)
		}
	}
	return fault.RateLimited(fmt.Errorf("%s: HTTP 429", backend), wait, "%s is rate limiting searches (HTTP 429)", backend)
}

// Unexpected returns the error of an answer a backend should not have given.
func (a Answer) Unexpected(backend string) error {
	return fault.Unavailable(fmt.Errorf("%s: HTTP %d", backend, a.Status), "%s answered HTTP %d", backend, a.Status)
}
