// Package admin lets the apikey command manage a local server's keys while
// the server runs. The server holds its data folder's table open, and bbolt
// locks the file against every other process (a read-only open as well), so
// the server also serves create, list and revoke, as HTTP with JSON bodies, on
// a Unix socket in that folder: <data>/admin/apikey.sock. The socket's folder
// is 0700 and the socket 0600, so only the folder's owner can connect; nothing
// listens on the network. Keys changed through the socket take effect at once:
// the local server checks every request against its table.
//
//	ln, err := admin.Listen(data) // the server, once it holds the table
//	go admin.Serve(ctx, ln, keys, nil)
//
//	c, err := admin.Dial(ctx, data) // the apikey command
//	if errors.Is(err, admin.ErrNotRunning) { /* open the table itself */ }
//	secret, key, err := c.Create(ctx, "acme", "alice", nil, time.Time{})
package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/profile"
)

// ErrNotRunning reports that no server listens on a data folder's socket.
var ErrNotRunning = errors.New("no server is running on this data folder")

// Manager creates, lists and revokes keys. [apikey.Keys] and [Client]
// implement it.
type Manager interface {
	Create(ctx context.Context, t, principal string, scopes []string, expires time.Time) (string, apikey.Key, error)
	List(ctx context.Context) ([]apikey.Key, error)
	Revoke(ctx context.Context, hash string) error
	SetProfile(ctx context.Context, hash string, p profile.Profile) (apikey.Key, error)
}

var (
	_ Manager = (*apikey.Keys)(nil)
	_ Manager = (*Client)(nil)
)

// SocketPath returns the socket of the server of data folder dir.
func SocketPath(dir string) string { return filepath.Join(dir, "admin", "apikey.sock") }

// maxBody bounds a request body: a create request is a few hundred bytes.
const maxBody = 64 << 10

// Listen listens on the socket of data folder dir, which the caller must
// hold (the table's lock proves it), replacing a socket a server that did not
// stop cleanly left behind. It creates the socket's folder, or narrows an
// existing one, to 0700, and refuses one that is a symbolic link.
func Listen(dir string) (net.Listener, error) {
	path := SocketPath(dir)
	sub := filepath.Dir(path)
	if err := os.Mkdir(sub, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("admin: create %s: %w", sub, err)
	}
	fi, err := os.Lstat(sub)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("admin: %s is not a folder (a symbolic link?); remove it", sub)
	}
	if err := os.Chmod(sub, 0o700); err != nil {
		return nil, fmt.Errorf("admin: restrict %s to its owner: %w", sub, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("admin: remove the stale socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin: restrict %s to its owner: %w", path, err)
	}
	return ln, nil
}

// Options configures [Serve]. A nil *Options uses the defaults.
type Options struct {
	// Created, if set, is called after each key created through the socket.
	Created func(apikey.Key)
	// Logger receives the failures callers are not told the details of. If
	// nil, they are discarded.
	Logger *slog.Logger
}

// Serve answers requests on ln with m until ctx is done, then closes ln,
// which removes the socket.
func Serve(ctx context.Context, ln net.Listener, m Manager, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           handler(m, o),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	err := srv.Serve(ln)
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// createRequest is the body of POST /keys.
type createRequest struct {
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal"`
	Scopes    []string  `json:"scopes,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// created answers POST /keys: the key itself, shown once, and what it is.
type created struct {
	Secret string `json:"key"`
	apikey.Key
}

// listed answers GET /keys.
type listed struct {
	Keys []apikey.Key `json:"keys"`
}

// failure is the body of every error answer.
type failure struct {
	Error string `json:"error"`
}

func handler(m Manager, o Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		var req createRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, failure{"admin: the request is not a key to create: " + err.Error()})
			return
		}
		secret, key, err := m.Create(r.Context(), req.Tenant, req.Principal, req.Scopes, req.ExpiresAt)
		if err != nil {
			writeError(w, o.Logger, err)
			return
		}
		if o.Created != nil {
			o.Created(key)
		}
		writeJSON(w, http.StatusCreated, created{secret, key})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		keys, err := m.List(r.Context())
		if err != nil {
			writeError(w, o.Logger, err)
			return
		}
		writeJSON(w, http.StatusOK, listed{keys})
	})
	mux.HandleFunc("PUT /keys/{hash}/profile", func(w http.ResponseWriter, r *http.Request) {
		var p profile.Profile
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			writeJSON(w, http.StatusBadRequest, failure{"admin: the request is not a profile: " + err.Error()})
			return
		}
		key, err := m.SetProfile(r.Context(), r.PathValue("hash"), p)
		if err != nil {
			writeError(w, o.Logger, err)
			return
		}
		writeJSON(w, http.StatusOK, key)
	})
	mux.HandleFunc("DELETE /keys/{hash}", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Revoke(r.Context(), r.PathValue("hash")); err != nil {
			writeError(w, o.Logger, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// statuses maps the kinds of failure to HTTP statuses, and back in [Client].
var statuses = map[fault.Kind]int{
	fault.KindInvalid:  http.StatusBadRequest,
	fault.KindNotFound: http.StatusNotFound,
	fault.KindConflict: http.StatusConflict,
}

func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	kind, _, msg := fault.Public(err)
	status, ok := statuses[kind]
	if !ok {
		log.Error("managing API keys failed", "error", err)
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, failure{msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Client manages keys through a running server's socket. It is safe for
// concurrent use.
type Client struct {
	hc *http.Client
}

// Dial connects to the server of data folder dir, or returns [ErrNotRunning]
// when no server listens there (no socket, or one a stopped server left).
func Dial(ctx context.Context, dir string) (*Client, error) {
	path := SocketPath(dir)
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	conn, err := dial(ctx, "", "")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
		return nil, ErrNotRunning
	}
	if err != nil {
		return nil, fmt.Errorf("admin: connect to the running server at %s: %w", path, err)
	}
	conn.Close()
	return &Client{hc: &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: 30 * time.Second}}, nil
}

// base is the URL the client's requests name; the socket decides where they go.
const base = "http://switchboard"

// Create implements [Manager].
func (c *Client) Create(ctx context.Context, t, principal string, scopes []string, expires time.Time) (string, apikey.Key, error) {
	var out created
	err := c.do(ctx, http.MethodPost, "/keys", createRequest{Tenant: t, Principal: principal, Scopes: scopes, ExpiresAt: expires}, &out)
	return out.Secret, out.Key, err
}

// List implements [Manager].
func (c *Client) List(ctx context.Context) ([]apikey.Key, error) {
	var out listed
	err := c.do(ctx, http.MethodGet, "/keys", nil, &out)
	return out.Keys, err
}

// Revoke implements [Manager].
func (c *Client) Revoke(ctx context.Context, hash string) error {
	return c.do(ctx, http.MethodDelete, "/keys/"+url.PathEscape(hash), nil, nil)
}

// SetProfile implements [Manager].
func (c *Client) SetProfile(ctx context.Context, hash string, p profile.Profile) (apikey.Key, error) {
	var out apikey.Key
	err := c.do(ctx, http.MethodPut, "/keys/"+url.PathEscape(hash)+"/profile", p, &out)
	return out, err
}

// do sends a request with in as its JSON body, if not nil, and decodes the
// answer into out, if not nil. An error answer becomes a [fault.Error] of
// the kind its status says.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("admin: %w", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("admin: %s %s through the running server: %w", method, path, err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode >= 300 {
		var f failure
		if err := dec.Decode(&f); err != nil || f.Error == "" {
			return fmt.Errorf("admin: %s %s: the running server answered %s", method, path, resp.Status)
		}
		kind := fault.KindInternal
		for k, s := range statuses {
			if s == resp.StatusCode {
				kind = k
			}
		}
		return &fault.Error{Kind: kind, Message: f.Error}
	}
	if out == nil {
		return nil
	}
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("admin: %s %s: reading the answer: %w", method, path, err)
	}
	return nil
}
