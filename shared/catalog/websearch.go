package catalog

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WebSearchFamily names the tools that search the web (package websearch).
const WebSearchFamily = "websearch"

// webSearchTools returns the web search family's tools. Each backend
// request stops after 10 s (websearch.DefaultTimeout), and a search may try
// three backends in turn.
func webSearchTools() []*Tool {
	limits := Limits{Timeout: 35 * time.Second, MemoryMB: 256}
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}
	return []*Tool{{
		Name:  "duckduckgo_search",
		Title: "Search DuckDuckGo",
		// Seed 004's description, word for word.
		Description: "Search using DuckDuckGo (free, unlimited, privacy-focused). Returns up to 5 relevant search results with titles, content snippets, and links.",
		Family:      WebSearchFamily,
		Function:    "websearch/duckduckgo_search",
		Annotations: read,
		Visibility:  Public,
		Limits:      limits,
		Table:       ReadPut,
		Searches:    true,
		Group:       GroupWebSearch,
		Example:     json.RawMessage(`{"query":"golang generics tutorial"}`),
	}, {
		Name:  "web_search",
		Title: "Search the web",
		Description: "Searches the web through the configured backends (DuckDuckGo, Brave Search, a SearXNG instance) and returns structured results: title, url, snippet and the backend that found each. " +
			"Options: max_results (1-20, default 5), region (such as us-en), safe_search (off, moderate, strict) and backend (one of the configured ones; empty tries them in order, falling to the next when one is blocked or rate limited). " +
			"Results are cached for your tenant for a while (cached: true), and your tenant's searches are rate limited.",
		Family:      WebSearchFamily,
		Function:    "websearch/web_search",
		Annotations: read,
		Visibility:  Public,
		Limits:      limits,
		Table:       ReadPut,
		Searches:    true,
		Group:       GroupWebSearch,
		Example:     json.RawMessage(`{"query":"golang generics tutorial","max_results":5,"region":"us-en","safe_search":"moderate"}`),
	}}
}
