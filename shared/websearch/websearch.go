// Package websearch searches the web for a tenant through the backends the
// deployment configures (package websearch/duckduckgo, websearch/brave,
// websearch/searxng), caching each tenant's results for a while and keeping
// each tenant to its own rate of outbound searches. It serves the web search
// family: duckduckgo_search, seed 004's tool (its text answer), and
// web_search, structured results with options.
//
//	svc := websearch.New(table, &websearch.Options{Backends: []websearch.Backend{ddg, brave}})
//	out, err := svc.Search(ctx, caller, websearch.SearchInput{Query: "golang generics", MaxResults: 5})
//	// out.Results[i].Title, .URL, .Snippet, .Source; out.Backend answered, out.Cached
//
// A search without a backend named tries the backends in order and falls to
// the next when one is blocked, rate limited or unavailable; an error the
// caller made (an empty query) stops at once.
//
// Keys, in the tenant's own partition (a tenant-scoped credential reaches
// them; no other tenant's search can read or fill them):
//
//	t#<tenant>#websearch  cache#<64 hex>  results (JSON), backend      TTL: Options.CacheTTL
//	                      rate            a token bucket (package ratelimit's)
//
// The cache key is the SHA-256 of the backend asked for ("" for any), the
// region, the safe-search level and the query folded to lower case with its
// spaces collapsed; results are fetched up to [MaxResults] and cut to what
// each call asks, so one entry serves every max_results. The cache is in the
// table rather than in the instance: searches are slow (hundreds of
// milliseconds) and repeated across a conversation's turns, which reach
// different instances, and a table read costs a few milliseconds.
package websearch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The limits of a search.
const (
	// MaxQueryChars bounds a query.
	MaxQueryChars = 500
	// MaxResults bounds the results of one search, and is what every
	// backend is asked for.
	MaxResults = 20
	// DefaultResults is how many results a search returns unless asked
	// otherwise: seed 004's five.
	DefaultResults = 5
	// MaxTitleChars, MaxSnippetChars and MaxURLBytes bound what a backend's
	// answer may put in one result; longer titles and snippets are cut,
	// longer URLs dropped.
	MaxTitleChars   = 300
	MaxSnippetChars = 1000
	MaxURLBytes     = 2048
	// MaxBodyBytes bounds the answer read from a backend.
	MaxBodyBytes = 2 << 20
)

// Defaults of [Options].
const (
	DefaultCacheTTL = 15 * time.Minute
	// DefaultTimeout bounds each backend request.
	DefaultTimeout = 10 * time.Second
)

// DefaultRate is a tenant's rate of outbound searches unless the deployment
// sets another: 30 a minute, in bursts of 10. Cached answers do not count.
var DefaultRate = ratelimit.Rate{PerSecond: 0.5, Burst: 10}

// The backends' names; duckduckgo_search asks DuckDuckGoBackend.
const (
	DuckDuckGoBackend = "duckduckgo"
	BraveBackend      = "brave"
	SearXNGBackend    = "searxng"
)

// BackendNames lists the backends' names.
var BackendNames = []string{DuckDuckGoBackend, BraveBackend, SearXNGBackend}

// The safe-search levels.
const (
	SafeOff      = "off"
	SafeModerate = "moderate"
	SafeStrict   = "strict"
)

// SafeLevels lists the safe-search levels.
var SafeLevels = []string{SafeOff, SafeModerate, SafeStrict}

// RegionPattern is the form of a region: country and language, as
// DuckDuckGo spells them ("us-en", "de-de"); "wt-wt" is no region.
const RegionPattern = `^[a-z]{2}-[a-z]{2}$`

// Query is what a backend is asked.
type Query struct {
	Text string
	// Max is how many results to return at most, 1 to [MaxResults].
	Max int
	// Region is "cc-ll" (country, language), or "" for none.
	Region string
	// Safe is one of [SafeLevels].
	Safe string
}

// Country returns the region's country code ("us"), or "" for none.
func (q Query) Country() string {
	c, _, _ := strings.Cut(q.Region, "-")
	if c == "wt" {
		return ""
	}
	return c
}

// Language returns the region's language code ("en"), or "" for none.
func (q Query) Language() string {
	_, l, _ := strings.Cut(q.Region, "-")
	if l == "wt" {
		return ""
	}
	return l
}

// Result is one search result.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	// Source names the backend that found it.
	Source string `json:"source"`
}

// Backend is one search engine. Search must stop at ctx's deadline and
// return at most q.Max results, each within the limits above (see
// [Clean]). Its errors: [ErrBlocked] when the engine refuses to answer
// (a captcha or an anomaly page), a [fault.KindRateLimited] error with the
// engine's Retry-After when it says to slow down, a [fault.KindUnavailable]
// error for anything else the engine did. Implementations are safe for
// concurrent use.
type Backend interface {
	Name() string
	Search(ctx context.Context, q Query) ([]Result, error)
}

// ErrBlocked is the cause of a search a backend refused to answer.
var ErrBlocked = errors.New("blocked")

// Blocked returns the error of a backend that refused to answer: why, and
// what to do about it.
func Blocked(backend, why string) error {
	return fault.Unavailable(fmt.Errorf("%s: %w", backend, ErrBlocked),
		"%s blocked the search (%s); try again later, or use another backend", backend, why)
}

// Options configures [New]. A nil *Options uses the defaults, and no backend.
type Options struct {
	// Backends are the configured backends, in the order a search without a
	// backend named tries them.
	Backends []Backend
	// CacheTTL is how long results stay cached. If zero, defaults to
	// [DefaultCacheTTL]; negative caches nothing.
	CacheTTL time.Duration
	// Rate is each tenant's rate of outbound searches. If zero, defaults to
	// [DefaultRate]; negative PerSecond imposes none.
	Rate ratelimit.Rate
	// Timeout bounds each backend request. If zero, defaults to [DefaultTimeout].
	Timeout time.Duration
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives warnings (a cache that could not be read or written).
	// If nil, logs are discarded.
	Logger *slog.Logger
}

// Service searches the web for tenants. It is safe for concurrent use.
type Service struct {
	table    store.Table
	backends []Backend
	ttl      time.Duration
	rate     ratelimit.Rate
	limiter  *ratelimit.Limiter
	timeout  time.Duration
	now      func() time.Time
	log      *slog.Logger
}

// New returns a Service keeping its cache and counters in table.
func New(table store.Table, opts *Options) *Service {
	s := &Service{table: table, ttl: DefaultCacheTTL, rate: DefaultRate, timeout: DefaultTimeout, now: time.Now, log: slog.New(slog.DiscardHandler)}
	if opts != nil {
		s.backends = opts.Backends
		if opts.CacheTTL != 0 {
			s.ttl = opts.CacheTTL
		}
		if opts.Rate != (ratelimit.Rate{}) {
			s.rate = opts.Rate
		}
		if opts.Timeout > 0 {
			s.timeout = opts.Timeout
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.Logger != nil {
			s.log = opts.Logger
		}
	}
	s.log = s.log.With("component", "websearch")
	s.limiter = ratelimit.New(table, &ratelimit.Options{Now: s.now, Logger: s.log})
	return s
}

// Backends returns the names of the configured backends, in order.
func (s *Service) Backends() []string {
	names := make([]string, len(s.backends))
	for i, b := range s.backends {
		names[i] = b.Name()
	}
	return names
}

// SearchInput is web_search's input.
type SearchInput struct {
	Query      string `json:"query" jsonschema:"what to search the web for"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"how many results at most (default 5)"`
	Region     string `json:"region,omitempty" jsonschema:"country and language, such as us-en or de-de; wt-wt or empty for none"`
	SafeSearch string `json:"safe_search,omitempty" jsonschema:"off, moderate (the default) or strict"`
	Backend    string `json:"backend,omitempty" jsonschema:"the backend to ask (duckduckgo, brave or searxng, as configured); empty tries the configured ones in order"`
}

// SearchOutput is web_search's output.
type SearchOutput struct {
	Query string `json:"query"`
	// Backend names the backend that answered.
	Backend string   `json:"backend"`
	Cached  bool     `json:"cached"`
	Results []Result `json:"results"`
	// Skipped says why each backend tried before the one that answered
	// did not.
	Skipped []string `json:"skipped,omitempty"`
}

// Search searches the web for in.Query.
func (s *Service) Search(ctx context.Context, c tenant.Caller, in SearchInput) (SearchOutput, error) {
	q, err := s.query(in)
	if err != nil {
		return SearchOutput{}, err
	}
	backends := s.backends
	if in.Backend != "" {
		i := slices.IndexFunc(s.backends, func(b Backend) bool { return b.Name() == in.Backend })
		if i < 0 {
			return SearchOutput{}, fault.Invalid("backend", "backend %q is not configured; the configured backends are %s", in.Backend, s.names())
		}
		backends = s.backends[i : i+1]
	}
	if len(backends) == 0 {
		return SearchOutput{}, fault.Unavailable(nil, "no web search backend is configured")
	}
	out := SearchOutput{Query: q.Text}
	key := cacheKey(in.Backend, q)
	if e, ok := s.cached(ctx, c.Tenant, key); ok {
		out.Backend, out.Cached, out.Results = e.Backend, true, cut(e.Results, q.Max)
		return out, nil
	}
	if err := s.admit(ctx, c.Tenant); err != nil {
		return SearchOutput{}, err
	}
	wide := q
	wide.Max = MaxResults
	var last error
	for _, b := range backends {
		results, err := s.ask(ctx, b, wide)
		if err == nil {
			s.store(ctx, c.Tenant, key, entry{Backend: b.Name(), Results: results})
			out.Backend, out.Results = b.Name(), cut(results, q.Max)
			return out, nil
		}
		if k := fault.KindOf(err); k == fault.KindInvalid || ctx.Err() != nil {
			return SearchOutput{}, err
		}
		_, _, msg := fault.Public(err)
		out.Skipped = append(out.Skipped, b.Name()+": "+msg)
		last = err
	}
	if len(backends) == 1 {
		return SearchOutput{}, last
	}
	return SearchOutput{}, fault.Unavailable(last, "every web search backend failed: %s", strings.Join(out.Skipped, "; "))
}

// DuckDuckGoInput is duckduckgo_search's input, seed 004's.
type DuckDuckGoInput struct {
	Query string `json:"query" jsonschema:"Search query - should be specific and descriptive for best results"`
}

// DuckDuckGoOutput is duckduckgo_search's output: up to five results, which
// [DuckDuckGoOutput.Text] writes as seed 004 did.
type DuckDuckGoOutput struct {
	Results []Result `json:"results"`
}

// DuckDuckGo serves duckduckgo_search: [Service.Search] of the DuckDuckGo
// backend with the defaults.
func (s *Service) DuckDuckGo(ctx context.Context, c tenant.Caller, in DuckDuckGoInput) (DuckDuckGoOutput, error) {
	if !slices.Contains(s.Backends(), DuckDuckGoBackend) {
		return DuckDuckGoOutput{}, fault.Unavailable(nil, "the %s backend is not configured; the configured backends are %s (web_search asks them)", DuckDuckGoBackend, s.names())
	}
	out, err := s.Search(ctx, c, SearchInput{Query: in.Query, Backend: DuckDuckGoBackend})
	if err != nil {
		return DuckDuckGoOutput{}, err
	}
	return DuckDuckGoOutput{Results: out.Results}, nil
}

// Text writes o as seed 004's tool did: per result, "Title: ...\nContent:
// ...\nLink: ...\n---", one after another on new lines.
func (o DuckDuckGoOutput) Text() string {
	if len(o.Results) == 0 {
		return "No results found."
	}
	var b strings.Builder
	for i, r := range o.Results {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "Title: %s\nContent: %s\nLink: %s\n---", r.Title, r.Snippet, r.URL)
	}
	return b.String()
}

// query checks in and fills in its defaults.
func (s *Service) query(in SearchInput) (Query, error) {
	text := strings.Join(strings.Fields(in.Query), " ")
	switch {
	case text == "":
		return Query{}, fault.Invalid("query", "is empty; say what to search for")
	case !utf8.ValidString(text):
		return Query{}, fault.Invalid("query", "is not valid UTF-8")
	case utf8.RuneCountInString(text) > MaxQueryChars:
		return Query{}, fault.Invalid("query", "is over %d characters", MaxQueryChars)
	case in.MaxResults < 0 || in.MaxResults > MaxResults:
		return Query{}, fault.Invalid("max_results", "must be from 1 to %d", MaxResults)
	case in.Region != "" && !isRegion(in.Region):
		return Query{}, fault.Invalid("region", "%q is not a region: country and language in lower case, such as us-en", in.Region)
	case in.SafeSearch != "" && !slices.Contains(SafeLevels, in.SafeSearch):
		return Query{}, fault.Invalid("safe_search", "%q is not one of %s", in.SafeSearch, strings.Join(SafeLevels, ", "))
	}
	q := Query{Text: text, Max: in.MaxResults, Region: in.Region, Safe: in.SafeSearch}
	if q.Max == 0 {
		q.Max = DefaultResults
	}
	if q.Safe == "" {
		q.Safe = SafeModerate
	}
	if q.Region == "wt-wt" {
		q.Region = ""
	}
	return q, nil
}

func isRegion(r string) bool {
	if len(r) != 5 || r[2] != '-' {
		return false
	}
	for i, c := range []byte(r) {
		if i != 2 && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

func (s *Service) names() string {
	if len(s.backends) == 0 {
		return "none"
	}
	return strings.Join(s.Backends(), ", ")
}

// ask asks b for q within the service's timeout, and cleans its answer.
func (s *Service) ask(ctx context.Context, b Backend, q Query) ([]Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	results, err := b.Search(ctx, q)
	if err != nil {
		if fault.KindOf(err) == fault.KindInternal {
			return nil, fault.Unavailable(err, "%s: the search failed: %v", b.Name(), err)
		}
		return nil, err
	}
	return Clean(results, b.Name(), q.Max), nil
}

// Clean returns results within the limits: titles and snippets cut, results
// without a title or an http(s) URL, or with a URL over [MaxURLBytes],
// dropped, duplicates of a URL dropped, at most max, each with source.
func Clean(results []Result, source string, max int) []Result {
	out := make([]Result, 0, min(len(results), max))
	seen := map[string]bool{}
	for _, r := range results {
		if len(out) == max {
			break
		}
		r.Title, r.Snippet = clip(r.Title, MaxTitleChars), clip(r.Snippet, MaxSnippetChars)
		r.URL = strings.TrimSpace(r.URL)
		if r.Title == "" || len(r.URL) > MaxURLBytes || seen[r.URL] ||
			!(strings.HasPrefix(r.URL, "https://") || strings.HasPrefix(r.URL, "http://")) {
			continue
		}
		seen[r.URL] = true
		r.Source = source
		out = append(out, r)
	}
	return out
}

// clip collapses s's white space and cuts it to at most n characters.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func cut(results []Result, max int) []Result {
	if results == nil {
		return []Result{}
	}
	return results[:min(len(results), max)]
}

// The keys of a tenant's web search items.
const (
	partition = "websearch"
	rateSK    = "rate"
)

func pk(tenantID string) string { return tenant.Key(tenantID) + partition }

// cacheKey returns the sort key of q's cached results from backend.
func cacheKey(backend string, q Query) string {
	sum := sha256.Sum256([]byte(backend + "\x00" + q.Region + "\x00" + q.Safe + "\x00" + strings.ToLower(q.Text)))
	return "cache#" + hex.EncodeToString(sum[:])
}

// entry is a cached answer.
type entry struct {
	Backend string   `json:"backend"`
	Results []Result `json:"results"`
}

// cached returns the live cached answer at key, if any. A cache that
// cannot be read is a miss: the search goes out.
func (s *Service) cached(ctx context.Context, tenantID, key string) (entry, bool) {
	if s.ttl < 0 {
		return entry{}, false
	}
	it, err := s.table.Get(ctx, pk(tenantID), key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.WarnContext(ctx, "reading the search cache failed", "tenant", tenantID, "error", err)
		}
		return entry{}, false
	}
	if it.Expired(s.now()) { // the table's clock may lag the service's
		return entry{}, false
	}
	var e entry
	if err := json.Unmarshal(it.Bytes("results"), &e.Results); err != nil {
		s.log.WarnContext(ctx, "a cached search is undecodable", "tenant", tenantID, "error", err)
		return entry{}, false
	}
	e.Backend = it.String("backend")
	return e, true
}

// store caches e at key; a failure costs the next call a search, no more.
func (s *Service) store(ctx context.Context, tenantID, key string, e entry) {
	if s.ttl < 0 {
		return
	}
	b, err := json.Marshal(e.Results)
	if err == nil {
		err = s.table.Put(ctx, store.Item{PK: pk(tenantID), SK: key, ExpiresAt: s.now().Add(s.ttl),
			Attrs: store.Attrs{"results": b, "backend": e.Backend}}, store.Condition{})
	}
	if err != nil {
		s.log.WarnContext(ctx, "caching a search failed", "tenant", tenantID, "error", err)
	}
}

// admit spends one of the tenant's outbound searches.
func (s *Service) admit(ctx context.Context, tenantID string) error {
	if s.rate.PerSecond < 0 {
		return nil
	}
	err := s.limiter.Take(ctx, pk(tenantID), rateSK, s.rate)
	if ex, ok := errors.AsType[*ratelimit.Exceeded](err); ok {
		return fault.RateLimited(err, ex.RetryAfter, "web search rate limit reached: tenant %q may make %.4g searches a minute (bursts of %d)",
			tenantID, s.rate.PerSecond*60, s.rate.Burst)
	}
	if err != nil {
		return fault.Unavailable(err, "checking the web search rate of tenant %q failed; retry", tenantID)
	}
	return nil
}
