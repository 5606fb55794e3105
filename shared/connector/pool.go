package connector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session states (seed 001): a session initialises, serves calls while
// ACTIVE, is closed after its idle timeout, and after a failed
// initialisation stays in ERROR until its retry delay has passed.
const (
	SessionInitializing = "INITIALIZING"
	SessionActive       = "ACTIVE"
	SessionError        = "ERROR"
	SessionClosed       = "CLOSED"
)

// initAttempts bounds the connection attempts of one initialisation, and
// initBackoff is the wait before the second (doubling after).
const (
	initAttempts = 3
	initBackoff  = 100 * time.Millisecond
)

// session is one pooled upstream session.
type session struct {
	key, tenant, connector string

	ready chan struct{} // closed once initialisation has ended

	// Guarded by pool.mu.
	state    string
	cs       *mcp.ClientSession
	err      error
	retryAt  time.Time
	lastUsed time.Time
	cancel   context.CancelFunc

	initAt   time.Time   // when it was initialised; set with cs
	dead     atomic.Bool // the connection ended (cs.Wait returned)
	progress sync.Map    // progress token -> func(*mcp.ProgressNotificationParams)
	// cut is why the client cut one of the session's responses, if it did.
	cut cutResponses
}

// pool holds the warm upstream sessions of one process.
type pool struct {
	idle, initTimeout, retryDelay time.Duration
	now                           func() time.Time
	log                           *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	tokens   atomic.Uint64
}

func newPool(idle, initTimeout, retryDelay time.Duration, now func() time.Time, log *slog.Logger) *pool {
	return &pool{idle: idle, initTimeout: initTimeout, retryDelay: retryDelay, now: now, log: log, sessions: map[string]*session{}}
}

// protocol is the protocol version s negotiated, and when.
func (s *session) protocol() (string, time.Time) {
	if init := s.cs.InitializeResult(); init != nil {
		return init.ProtocolVersion, s.initAt
	}
	return "", time.Time{}
}

// dialer is how to make a session: transport connects a transport for it,
// whose cut responses it records in cut, and protocol is the protocol
// version the session asks for first ("" for the newest, which a discovery
// negotiates).
type dialer struct {
	transport func(cut *cutResponses) mcp.Transport
	protocol  string
}

// errPoolClosed is returned once the pool has been closed.
var errPoolClosed = errors.New("the connector's sessions are closed: the process is shutting down")

// get returns an ACTIVE session for key, initialising one if there is none,
// and waits for it at most until ctx ends.
func (p *pool) get(ctx context.Context, key, t, name string, dial dialer) (*session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	now := p.now()
	p.sweepLocked(now)
	s := p.sessions[key]
	switch {
	case s == nil || s.state == SessionClosed || (s.state == SessionActive && s.dead.Load()) ||
		(s.state == SessionError && !now.Before(s.retryAt)):
		if s != nil && s.state == SessionActive {
			p.closeLocked(s)
		}
		s = &session{key: key, tenant: t, connector: name, ready: make(chan struct{}), state: SessionInitializing}
		p.sessions[key] = s
		go p.initialize(s, dial)
	case s.state == SessionError:
		err, wait := s.err, s.retryAt.Sub(now).Round(time.Millisecond)
		p.mu.Unlock()
		return nil, fmt.Errorf("%w (initialisation failed recently; the next attempt is in %v)", err, wait)
	}
	p.mu.Unlock()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the session to initialise: %w", ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.state != SessionActive {
		if s.err != nil {
			return nil, s.err
		}
		return nil, errors.New("the session was closed")
	}
	s.lastUsed = p.now()
	return s, nil
}

// initialize connects s within the initialisation timeout, retrying with
// backoff (an initialisation has no effect upstream), and ends in ACTIVE or
// ERROR. It runs apart from any one caller, whose wait ends with its own
// deadline, so that a session half-way through initialising serves the next
// call rather than being thrown away.
func (p *pool) initialize(s *session, dial dialer) {
	ctx, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	s.cancel = cancel
	p.mu.Unlock()
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard-connector", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if f, ok := s.progress.Load(fmt.Sprint(req.Params.ProgressToken)); ok {
				f.(func(*mcp.ProgressNotificationParams))(req.Params)
			}
		},
	})
	type result struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan result, 1)
	go func() {
		var cs *mcp.ClientSession
		var err error
		backoff := initBackoff
		opts := &mcp.ClientSessionOptions{ProtocolVersion: dial.protocol}
		for attempt := 1; attempt <= initAttempts; attempt++ {
			if cs, err = client.Connect(ctx, dial.transport(&s.cut), opts); err == nil || ctx.Err() != nil {
				break
			}
			// The upstream may no longer speak the version it negotiated
			// last: the next attempt starts from the newest.
			opts = nil
			if attempt < initAttempts {
				select {
				case <-ctx.Done():
				case <-time.After(backoff):
				}
				backoff *= 2
			}
		}
		if err == nil && ctx.Err() != nil {
			cs.Close()
			cs, err = nil, ctx.Err()
		}
		done <- result{cs, err}
	}()
	timer := time.NewTimer(p.initTimeout)
	defer timer.Stop()
	var r result
	select {
	case r = <-done:
	case <-timer.C:
		cancel()
		r = <-done
		r.err = fmt.Errorf("initialisation took longer than %v", p.initTimeout)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.err == nil && p.closed {
		r.cs.Close()
		r.err = errPoolClosed
	}
	if r.err != nil {
		cancel()
		s.state, s.err, s.retryAt = SessionError, fmt.Errorf("initialising: %w", r.err), p.now().Add(p.retryDelay)
	} else {
		s.state, s.cs, s.lastUsed = SessionActive, r.cs, p.now()
		s.initAt = s.lastUsed
		go func() {
			r.cs.Wait()
			s.dead.Store(true)
		}()
	}
	close(s.ready)
}

// sweepLocked closes sessions idle for longer than the idle timeout.
func (p *pool) sweepLocked(now time.Time) {
	for _, s := range p.sessions {
		if s.state == SessionActive && now.Sub(s.lastUsed) > p.idle {
			p.closeLocked(s)
		}
	}
}

// closeLocked closes s and forgets it; the close itself runs apart, since a
// graceful Streamable HTTP close sends a DELETE.
func (p *pool) closeLocked(s *session) {
	if p.sessions[s.key] == s {
		delete(p.sessions, s.key)
	}
	if s.state == SessionActive && s.cs != nil {
		go s.cs.Close()
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.state = SessionClosed
}

// evict closes s after a failure of its connection, so the next call
// initialises a fresh one.
func (p *pool) evict(s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.state == SessionActive {
		p.closeLocked(s)
	}
}

// drop closes every session of connector name of tenant t (its
// configuration or credentials changed).
func (p *pool) drop(t, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sessions {
		if s.tenant == t && s.connector == name && s.state != SessionInitializing {
			p.closeLocked(s)
		}
	}
}

// states returns the states of the sessions of connector name of tenant t.
func (p *pool) states(t, name string) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for _, s := range p.sessions {
		if s.tenant == t && s.connector == name {
			out[s.state]++
		}
	}
	return out
}

// closeAll closes every session, waiting for their graceful ends.
func (p *pool) closeAll() error {
	p.mu.Lock()
	p.closed = true
	var wg sync.WaitGroup
	for _, s := range p.sessions {
		if s.cancel != nil {
			s.cancel()
		}
		if s.state == SessionActive && s.cs != nil {
			wg.Go(func() { s.cs.Close() })
		}
		s.state = SessionClosed
	}
	p.sessions = map[string]*session{}
	p.mu.Unlock()
	wg.Wait()
	return nil
}

// nextToken returns a progress token unique in this process.
func (p *pool) nextToken() string { return fmt.Sprintf("sb-%d", p.tokens.Add(1)) }

// active reports whether key has an ACTIVE session whose connection has not
// ended: a call would run on it rather than make one.
func (p *pool) active(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sessions[key]
	return s != nil && s.state == SessionActive && !s.dead.Load() && p.now().Sub(s.lastUsed) <= p.idle
}

// do runs fn on an ACTIVE session for key. A failure of the connection
// evicts the session; the request is sent again, once, on a fresh session
// only when the upstream cannot have run it: the connection was refused,
// the upstream no longer knew the session, or the session had ended before
// the request was written.
func (p *pool) do(ctx context.Context, key, t, name string, dial dialer, fn func(*session) error) error {
	for attempt := 1; ; attempt++ {
		s, err := p.get(ctx, key, t, name, dial)
		if err != nil {
			return err
		}
		deadBefore := s.dead.Load()
		err = fn(s)
		if err == nil || upstreamAnswered(err) || ctx.Err() != nil {
			return err
		}
		p.evict(s)
		if attempt == 1 && (deadBefore || notSent(err)) {
			continue
		}
		return err
	}
}

// upstreamAnswered reports an error the upstream answered with (a JSON-RPC
// error): the session is sound.
func upstreamAnswered(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr)
}

// notSent reports an error that means the request never reached the
// upstream's handler.
func notSent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, mcp.ErrSessionMissing) ||
		strings.Contains(err.Error(), "connection refused")
}
