// Package duckduckgo is the web search backend of DuckDuckGo's HTML
// endpoint, which needs no key: a form posted to
// https://html.duckduckgo.com/html/, its answer a page whose results are
// div.result blocks, each with an a.result__a (title and link) and a
// .result__snippet. Ads (div.result--ad) are skipped, and links that go
// through DuckDuckGo's redirect (//duckduckgo.com/l/?uddg=<url>) are
// unwrapped. DuckDuckGo answers searches it takes for a bot's with 202 or
// 403, or with an anomaly page (a captcha); these are reported as blocked
// ([websearch.ErrBlocked]), as is a page with neither results nor its
// "No results" notice. A 429 is a rate-limited error with its Retry-After.
//
//	b := duckduckgo.New("", client) // client: a netguard.Policy's
//	results, err := b.Search(ctx, websearch.Query{Text: "golang", Max: 5, Safe: websearch.SafeModerate})
package duckduckgo

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/switchboard-dev/switchboard/shared/websearch"
)

// Name is the backend's name.
const Name = websearch.DuckDuckGoBackend

// DefaultURL is the HTML endpoint.
const DefaultURL = "https://html.duckduckgo.com/html/"

// maxTokenBytes bounds one token of the page (a tag with its attributes, or
// a run of text): a longer one ends the parse.
const maxTokenBytes = 64 << 10

// maxFieldBytes bounds the text gathered for one title or snippet before it
// is cut to the result limits.
const maxFieldBytes = 4 * websearch.MaxSnippetChars

// Backend searches DuckDuckGo's HTML endpoint. It is safe for concurrent use.
type Backend struct {
	url    string
	client *http.Client
}

var _ websearch.Backend = (*Backend)(nil)

// New returns the backend posting to endpoint ([DefaultURL] if empty) with
// client, which should be a netguard.Policy's.
func New(endpoint string, client *http.Client) *Backend {
	if endpoint == "" {
		endpoint = DefaultURL
	}
	return &Backend{url: endpoint, client: client}
}

// Name implements [websearch.Backend].
func (b *Backend) Name() string { return Name }

// safe maps the safe-search levels onto DuckDuckGo's kp parameter.
var safe = map[string]string{websearch.SafeOff: "-2", websearch.SafeModerate: "-1", websearch.SafeStrict: "1"}

// Search implements [websearch.Backend].
func (b *Backend) Search(ctx context.Context, q websearch.Query) ([]websearch.Result, error) {
	form := url.Values{"q": {q.Text}, "b": {""}, "kp": {safe[q.Safe]}}
	if q.Region != "" {
		form.Set("kl", q.Region)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	a, err := websearch.Send(b.client, req, Name)
	if err != nil {
		return nil, err
	}
	switch a.Status {
	case http.StatusOK:
	case http.StatusAccepted, http.StatusForbidden:
		return nil, websearch.Blocked(Name, "HTTP "+http.StatusText(a.Status)+", its answer to traffic it takes for a bot's")
	case http.StatusTooManyRequests:
		return nil, a.RateLimited(Name, time.Now())
	default:
		return nil, a.Unexpected(Name)
	}
	page, err := Parse(bytes.NewReader(a.Body), q.Max)
	switch {
	case err != nil:
		return nil, websearch.Blocked(Name, "a page that could not be read: "+err.Error())
	case page.Anomaly:
		return nil, websearch.Blocked(Name, "an anomaly page asking to prove a human is searching")
	case len(page.Results) == 0 && !page.NoResults:
		return nil, websearch.Blocked(Name, "an empty page, with neither results nor its no-results notice")
	}
	return page.Results, nil
}

// Page is what [Parse] finds in a result page.
type Page struct {
	Results []websearch.Result
	// NoResults reports the page's notice that nothing was found.
	NoResults bool
	// Anomaly reports DuckDuckGo's bot challenge.
	Anomaly bool
	// Ads counts the ads skipped.
	Ads int
}

// Parse reads a result page from r, keeping up to max results, in one pass
// over its tokens (no tree is built): memory stays bounded by
// [maxTokenBytes] and the fields gathered, whatever the page.
func Parse(r io.Reader, max int) (Page, error) {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxTokenBytes)
	var p Page
	var cur *block     // the result being read, nil outside one
	var field *capture // the title or snippet whose text is being gathered
	for len(p.Results) < max {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return Page{}, err
			}
			p.finish(cur)
			return p, nil
		case html.TextToken:
			if field != nil {
				field.add(z.Text())
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if field != nil && field.end(string(name)) {
				field = nil
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			raw, hasAttrs := z.TagName()
			name := string(raw)
			var attrs map[string]string
			if hasAttrs {
				attrs = tagAttrs(z)
			}
			if tt == html.StartTagToken && field != nil && name == field.tag {
				field.depth++
			}
			classes := attrs["class"]
			switch {
			case name == "form" && strings.Contains(attrs["action"], "anomaly"), hasClassPrefix(classes, "anomaly-modal"):
				p.Anomaly = true
			case hasClass(classes, "no-results"), hasClass(classes, "result--no-result"):
				p.NoResults = true
			case hasClass(classes, "result"):
				p.finish(cur)
				cur, field = &block{ad: hasClass(classes, "result--ad")}, nil
			case cur != nil && tt == html.StartTagToken && hasClass(classes, "result__a") && cur.title == nil:
				cur.href, cur.title = attrs["href"], &capture{tag: name}
				field = cur.title
			case cur != nil && tt == html.StartTagToken && hasClass(classes, "result__snippet") && cur.snippet == nil:
				cur.snippet = &capture{tag: name}
				field = cur.snippet
			}
		}
	}
	p.finish(cur)
	return p, nil
}

// block is one div.result as it is read.
type block struct {
	ad             bool
	href           string
	title, snippet *capture
}

// finish adds b's result to p, unless it is an ad or incomplete.
func (p *Page) finish(b *block) {
	if b == nil {
		return
	}
	link := Unwrap(b.href)
	if b.ad || isAd(link) {
		p.Ads++
		return
	}
	if b.title == nil || link == "" {
		return
	}
	r := websearch.Result{Title: b.title.text.String(), URL: link}
	if b.snippet != nil {
		r.Snippet = b.snippet.text.String()
	}
	p.Results = append(p.Results, r)
}

// capture gathers an element's text up to its end tag.
type capture struct {
	tag   string
	depth int // elements of the same name open inside it
	text  strings.Builder
}

func (c *capture) add(b []byte) {
	if room := maxFieldBytes - c.text.Len(); room > 0 {
		c.text.Write(b[:min(len(b), room)])
	}
}

// end reports whether an end tag of name closes the element.
func (c *capture) end(name string) bool {
	if name != c.tag {
		return false
	}
	if c.depth > 0 {
		c.depth--
		return false
	}
	return true
}

// tagAttrs returns the class, href and action attributes of the tokenizer's
// current tag.
func tagAttrs(z *html.Tokenizer) map[string]string {
	m := map[string]string{}
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "class", "href", "action":
			m[string(k)] = string(v)
		}
		if !more {
			return m
		}
	}
}

func hasClass(classes, name string) bool {
	for _, c := range strings.Fields(classes) {
		if c == name {
			return true
		}
	}
	return false
}

func hasClassPrefix(classes, prefix string) bool {
	for _, c := range strings.Fields(classes) {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// Unwrap returns the link href points to: the uddg parameter of a
// DuckDuckGo redirect (//duckduckgo.com/l/?uddg=...), else href itself,
// made absolute (a scheme-relative //host/... becomes https://host/...);
// "" for a link that is neither http nor https.
func Unwrap(href string) string {
	href = strings.TrimSpace(href)
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	}
	u, err := url.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	if isDuckDuckGo(u.Host) && u.Path == "/l/" {
		target := u.Query().Get("uddg")
		if t, err := url.Parse(target); err == nil && (t.Scheme == "http" || t.Scheme == "https") && t.Host != "" {
			return target
		}
		return ""
	}
	return href
}

// isAd reports whether link is one of DuckDuckGo's ad clicks.
func isAd(link string) bool {
	u, err := url.Parse(link)
	return err == nil && isDuckDuckGo(u.Host) && u.Path == "/y.js"
}

func isDuckDuckGo(host string) bool {
	return host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com")
}
