package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable reports that a token could not be checked because the
// issuer's keys or metadata could not be fetched: the caller should answer
// 503 and the client retry, not sign in again.
var ErrUnavailable = errors.New("oauth: the token issuer cannot be reached")

// Defaults of the key cache ([ValidatorOptions]).
const (
	// DefaultRefetchInterval is the least time between two fetches of an
	// issuer's keys, so that a flood of tokens naming unknown keys costs the
	// issuer one request per interval.
	DefaultRefetchInterval = time.Minute
	// DefaultKeysMaxAge is how long fetched keys are used before they are
	// fetched again (a key the issuer withdrew stops working within it).
	DefaultKeysMaxAge = time.Hour
)

// fetchTimeout bounds every request this package makes to another server.
const fetchTimeout = 10 * time.Second

// maxDocumentBytes bounds a metadata document or key set read from another
// server.
const maxDocumentBytes = 64 << 10

// keySource gives the key a token names.
type keySource interface {
	key(ctx context.Context, kid string) (publicKey, error)
}

// staticKeys is a key set known in advance: the facade's own.
type staticKeys map[string]publicKey

func (s staticKeys) key(_ context.Context, kid string) (publicKey, error) {
	if k, ok := s[kid]; ok {
		return k, nil
	}
	return publicKey{}, fmt.Errorf("token is signed with an unknown key %q", kid)
}

// remoteKeys is an issuer's key set, fetched from its jwks_uri (discovered
// from its metadata when not configured), cached for maxAge and fetched again
// for an unknown kid at most once per interval. It is safe for concurrent use.
type remoteKeys struct {
	issuer   string
	jwksURL  string // empty until discovered
	client   *http.Client
	interval time.Duration
	maxAge   time.Duration
	now      func() time.Time

	mu       sync.Mutex
	keys     map[string]publicKey
	fetched  time.Time     // last successful fetch
	tried    time.Time     // last attempt
	inflight chan struct{} // closed when the fetch under way ends
	lastErr  error
}

func (r *remoteKeys) key(ctx context.Context, kid string) (publicKey, error) {
	for {
		r.mu.Lock()
		k, known := r.keys[kid]
		now := r.now()
		stale := now.Sub(r.fetched) >= r.maxAge
		due := now.Sub(r.tried) >= r.interval
		if known && !stale {
			r.mu.Unlock()
			return k, nil
		}
		if wait := r.inflight; wait != nil {
			r.mu.Unlock()
			select {
			case <-wait:
				r.mu.Lock()
				k, known = r.keys[kid]
				err := r.lastErr
				r.mu.Unlock()
				return r.answer(k, known, kid, err)
			case <-ctx.Done():
				return publicKey{}, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
			}
		}
		if !due {
			err := r.lastErr
			r.mu.Unlock()
			return r.answer(k, known, kid, err)
		}
		done := make(chan struct{})
		r.inflight, r.tried = done, now
		r.mu.Unlock()

		keys, err := r.fetch(ctx)
		r.mu.Lock()
		if err == nil {
			r.keys, r.fetched = keys, r.now()
		}
		r.lastErr, r.inflight = err, nil
		close(done)
		r.mu.Unlock()
		if err != nil && !known {
			return publicKey{}, err
		}
		// Loop once more to read the fresh set (or serve the known key when
		// the fetch failed: a stale key beats refusing every token).
		if err != nil {
			return k, nil
		}
	}
}

// answer is what a lookup that made no fetch of its own returns.
func (r *remoteKeys) answer(k publicKey, known bool, kid string, fetchErr error) (publicKey, error) {
	switch {
	case known:
		return k, nil
	case fetchErr != nil:
		return publicKey{}, fetchErr
	}
	return publicKey{}, fmt.Errorf("token is signed with an unknown key %q", kid)
}

// fetch reads the issuer's key set.
func (r *remoteKeys) fetch(ctx context.Context) (map[string]publicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	r.mu.Lock()
	jwksURL := r.jwksURL
	r.mu.Unlock()
	if jwksURL == "" {
		meta, err := discover(ctx, r.client, r.issuer)
		if err != nil {
			return nil, err
		}
		if meta.JWKSURI == "" {
			return nil, fmt.Errorf("%w: the metadata of %s has no jwks_uri", ErrUnavailable, r.issuer)
		}
		jwksURL = meta.JWKSURI
		r.mu.Lock()
		r.jwksURL = jwksURL
		r.mu.Unlock()
	}
	var set JWKS
	if err := getJSON(ctx, r.client, jwksURL, &set); err != nil {
		return nil, err
	}
	keys := parseJWKS(set)
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: the key set at %s holds no usable signing key", ErrUnavailable, jwksURL)
	}
	return keys, nil
}

// providerMetadata is what this package reads of an issuer's OpenID Connect
// discovery document or RFC 8414 metadata.
type providerMetadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
}

// discover reads issuer's OpenID Connect discovery document (then its RFC
// 8414 metadata) and checks that it names issuer exactly and that its
// endpoints use HTTPS (or HTTP on a loopback address).
func discover(ctx context.Context, client *http.Client, issuer string) (providerMetadata, error) {
	base := strings.TrimSuffix(issuer, "/")
	var meta providerMetadata
	err := getJSON(ctx, client, base+"/.well-known/openid-configuration", &meta)
	if err != nil {
		if u, perr := url.Parse(base); perr == nil {
			err2 := getJSON(ctx, client, u.Scheme+"://"+u.Host+"/.well-known/oauth-authorization-server"+u.Path, &meta)
			if err2 == nil {
				err = nil
			}
		}
	}
	if err != nil {
		return providerMetadata{}, err
	}
	if meta.Issuer != issuer {
		return providerMetadata{}, fmt.Errorf("%w: the metadata of %s names the issuer %q", ErrUnavailable, issuer, meta.Issuer)
	}
	for _, e := range []string{meta.AuthorizationEndpoint, meta.TokenEndpoint, meta.JWKSURI} {
		if e != "" && checkSecureURL(e) != nil {
			return providerMetadata{}, fmt.Errorf("%w: the metadata of %s names %q, which is neither HTTPS nor on a loopback address", ErrUnavailable, issuer, e)
		}
	}
	return meta, nil
}

// getJSON reads the JSON document at u into v, bounded in size and time.
func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: fetching %s: %w", ErrUnavailable, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: fetching %s: status %d", ErrUnavailable, u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("%w: reading %s: %w", ErrUnavailable, u, err)
	}
	if len(body) > maxDocumentBytes {
		return fmt.Errorf("%w: %s is larger than %d bytes", ErrUnavailable, u, maxDocumentBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s is not the JSON expected: %w", ErrUnavailable, u, err)
	}
	return nil
}

// checkSecureURL accepts an absolute https URL, or an http one on a loopback
// address (a provider on the same machine, as in tests and on a laptop).
func checkSecureURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("%q is not an absolute URL without credentials or fragment", raw)
	}
	if u.Scheme == "https" || (u.Scheme == "http" && isLoopback(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("%q must use https (http only on a loopback address)", raw)
}

// isLoopback reports whether host is localhost or a loopback IP address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
