// Package brave is the web search backend of the Brave Search API: GET
// https://api.search.brave.com/res/v1/web/search?q=..., the subscription
// key in the X-Subscription-Token header, the results in the JSON answer's
// web.results (title, url, description). A 401 or 403 means the key is
// wrong, a 429 that the plan's rate or quota is spent (with Retry-After).
//
//	b, err := brave.New("", key, client) // client: a netguard.Policy's
//	results, err := b.Search(ctx, websearch.Query{Text: "golang", Max: 5, Safe: websearch.SafeModerate})
package brave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/websearch"
)

// Name is the backend's name.
const Name = websearch.BraveBackend

// DefaultURL is the API's web search endpoint.
const DefaultURL = "https://api.search.brave.com/res/v1/web/search"

// Backend searches with the Brave Search API. It is safe for concurrent use.
type Backend struct {
	url    string
	key    string
	client *http.Client
}

var _ websearch.Backend = (*Backend)(nil)

// New returns the backend calling endpoint ([DefaultURL] if empty) with the
// subscription key and client, which should be a netguard.Policy's. The
// key is required.
func New(endpoint, key string, client *http.Client) (*Backend, error) {
	if endpoint == "" {
		endpoint = DefaultURL
	}
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("brave: the API key is required")
	}
	return &Backend{url: endpoint, key: strings.TrimSpace(key), client: client}, nil
}

// Name implements [websearch.Backend].
func (b *Backend) Name() string { return Name }

// answer is the part of the API's answer read.
type answer struct {
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements [websearch.Backend].
func (b *Backend) Search(ctx context.Context, q websearch.Query) ([]websearch.Result, error) {
	params := url.Values{"q": {q.Text}, "count": {strconv.Itoa(min(q.Max, 20))}, "safesearch": {q.Safe}}
	if c := q.Country(); c != "" {
		params.Set("country", strings.ToUpper(c))
	}
	if l := q.Language(); l != "" {
		params.Set("search_lang", l)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url+"?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	a, err := websearch.Send(b.client, req, Name)
	if err != nil {
		return nil, err
	}
	switch a.Status {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fault.Unavailable(fmt.Errorf("brave: HTTP %d", a.Status),
			"brave refused the API key (HTTP %d): the deployment's Brave API key is missing, wrong or expired", a.Status)
	case http.StatusTooManyRequests:
		return nil, a.RateLimited(Name, time.Now())
	default:
		return nil, a.Unexpected(Name)
	}
	var ans answer
	if err := json.Unmarshal(a.Body, &ans); err != nil {
		return nil, fault.Unavailable(err, "brave answered something that is not its JSON: %v", err)
	}
	out := make([]websearch.Result, 0, min(len(ans.Web.Results), q.Max))
	for _, r := range ans.Web.Results {
		out = append(out, websearch.Result{Title: r.Title, URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return out, nil
}

// stripTags removes the <strong> marks Brave puts around matched words.
func stripTags(s string) string {
	return strings.NewReplacer("<strong>", "", "</strong>", "", "<b>", "", "</b>", "").Replace(s)
}
