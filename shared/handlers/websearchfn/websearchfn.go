// Package websearchfn binds the web search family's functions to package
// websearch: one [lambdafn.Function] per function, which its main starts
// (functions/websearch/<name>/main.go) and package handlers lists.
package websearchfn

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/websearch"
)

// service builds the web search service of a function from its Deps: the
// table (cache and rate) and the backends config/search opened.
func service(d lambdafn.Deps) *websearch.Service {
	o := websearch.Options{}
	if opened, ok := d.WebSearch.(*websearch.Options); ok && opened != nil {
		o = *opened
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	return websearch.New(d.Table, &o)
}

// The functions of the web search family, one per tool.
var (
	DuckDuckGo = lambdafn.Method("duckduckgo_search", service, duckDuckGo)
	WebSearch  = lambdafn.Method("web_search", service, (*websearch.Service).Search)
)

// duckDuckGo serves duckduckgo_search: the results as seed 004's text.
func duckDuckGo(s *websearch.Service, ctx context.Context, c tenant.Caller, in websearch.DuckDuckGoInput) (seedText, error) {
	out, err := s.DuckDuckGo(ctx, c, in)
	return seedText{out}, err
}

// seedText is duckduckgo_search's answer: the results as structured
// content, and as text in seed 004's form.
type seedText struct{ websearch.DuckDuckGoOutput }

// MCPContent implements [lambdafn.Contenter].
func (s seedText) MCPContent() []mcp.Content {
	return []mcp.Content{&mcp.TextContent{Text: s.Text()}}
}

// Functions returns every function of the web search family.
func Functions() []lambdafn.Function { return []lambdafn.Function{DuckDuckGo, WebSearch} }
