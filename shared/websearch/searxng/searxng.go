// Package searxng is the web search backend of a SearXNG instance's JSON
// API: GET {base}/search?q=...&format=json, the results in the answer's
// results (title, url, content). The instance must allow the json format
// (search.formats in its settings.yml); one that does not answers 403.
//
//	b, err := searxng.New("https://searx.example.org", client) // client: a netguard.Policy's
//	results, err := b.Search(ctx, websearch.Query{Text: "golang", Max: 5, Safe: websearch.SafeModerate})
package searxng

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/websearch"
)

// Name is the backend's name.
const Name = websearch.SearXNGBackend

// Backend searches a SearXNG instance. It is safe for concurrent use.
type Backend struct {
	endpoint string
	client   *http.Client
}

var _ websearch.Backend = (*Backend)(nil)

// New returns the backend of the instance at base (its root URL) with
// client, which should be a netguard.Policy's. base is required.
func New(base string, client *http.Client) (*Backend, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("searxng: the instance's base URL is required, such as https://searx.example.org")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	u.RawQuery, u.Fragment = "", ""
	return &Backend{endpoint: u.String(), client: client}, nil
}

// Name implements [websearch.Backend].
func (b *Backend) Name() string { return Name }

// safe maps the safe-search levels onto SearXNG's safesearch parameter.
var safe = map[string]string{websearch.SafeOff: "0", websearch.SafeModerate: "1", websearch.SafeStrict: "2"}

// answer is the part of the API's answer read.
type answer struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// Search implements [websearch.Backend].
func (b *Backend) Search(ctx context.Context, q websearch.Query) ([]websearch.Result, error) {
	params := url.Values{"q": {q.Text}, "format": {"json"}, "safesearch": {safe[q.Safe]}}
	if l := q.Language(); l != "" {
		if c := q.Country(); c != "" {
			l += "-" + strings.ToUpper(c)
		}
		params.Set("language", l)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint+"?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	a, err := websearch.Send(b.client, req, Name)
	if err != nil {
		return nil, err
	}
	switch a.Status {
	case http.StatusOK:
	case http.StatusForbidden:
		return nil, fault.Unavailable(fmt.Errorf("searxng: HTTP 403"), "searxng refused the search (HTTP 403): the instance must allow the json format (search.formats)")
	case http.StatusTooManyRequests:
		return nil, a.RateLimited(Name, time.Now())
	default:
		return nil, a.Unexpected(Name)
	}
	var ans answer
	if err := json.Unmarshal(a.Body, &ans); err != nil {
		return nil, fault.Unavailable(err, "searxng answered something that is not its JSON: %v", err)
	}
	out := make([]websearch.Result, 0, min(len(ans.Results), q.Max))
	for _, r := range ans.Results {
		out = append(out, websearch.Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}
