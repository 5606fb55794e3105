package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/toolsearch"
)

// ToolSearchName is the tool that finds tools by what they do.
//
// It runs in the gateway rather than in a function: what it searches is the
// caller's own tools/list (the catalog's tools its scopes and profile allow,
// its thread's groups, its connectors' proxied tools), which the gateway
// assembles for every list anyway; a function would need all of it sent in
// each call, or would need the connectors' cache and the profiles read
// again, and one more invocation. It links package toolsearch (BM25 over
// package text's analyser; no AWS client) into the gateway. Embeddings need
// a provider's client, which the deployed gateway does not link
// (shared/deploy's link test): there it embeds through the internal
// function vector_embed_texts when the stack configures a hosted embedder
// (Options.ToolEmbedFunction, embed.go), and ranks by BM25 alone when that
// fails, saying so; the local server gives it the configured embedder
// (Options.ToolEmbedder).
const ToolSearchName = "tool_search"

// defaultSearchK is how many tools tool_search returns when k is not given.
const defaultSearchK = 5

// toolSearchTool is tool_search as hosts list it.
var toolSearchTool = &mcp.Tool{
	Name:  ToolSearchName,
	Title: "Find tools",
	Description: "Finds the tools you may call that best do what query describes (BM25 over their names, titles and descriptions, with embeddings when the server has an embedder), " +
		"the connectors' tools included, and returns up to k of them (default 5, at most 20), best first, with their names, titles, descriptions and input schemas, " +
		"so that you can call a tool your tool list does not show. It searches only the tools this key, token and thread enable.",
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","minLength":1,"maxLength":%d,"description":"What the tool should do, in a few words."},`+
		`"k":{"type":"integer","minimum":1,"maximum":%d,"description":"How many tools to return (default %d)."}},`+
		`"required":["query"],"additionalProperties":false}`, toolsearch.MaxQueryBytes, toolsearch.MaxK, defaultSearchK)),
	OutputSchema: json.RawMessage(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object","properties":{` +
		`"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"inputSchema":{"type":"object"}},` +
		`"required":["name","inputSchema"]}},"ranking":{"type":"string","enum":["bm25"],"description":"bm25 when the embedder failed and BM25 ranked alone."}},"required":["tools"]}`),
}

func ptr[T any](v T) *T { return &v }

// foundTool is one tool tool_search returns.
type foundTool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema"`
}

// addToolSearch adds tool_search to s.
func (g *Gateway) addToolSearch(s *mcp.Server) {
	s.AddTool(toolSearchTool, g.searchTools)
}

// searchTools serves tool_search: the caller's callable tools, ranked.
// profilesMiddleware has checked that the caller may call tool_search.
func (g *Gateway) searchTools(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		K     *int   `json:"k"`
	}
	dec := json.NewDecoder(strings.NewReader(string(req.Params.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments: " + err.Error()}
	}
	k := defaultSearchK
	if in.K != nil {
		k = *in.K
	}
	p, _, err := g.requestProfile(ctx, req.Extra, req.Params.Meta)
	if err != nil {
		return nil, err
	}
	tools := g.callableTools(ctx, req.Extra, p)
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description}
	}
	caller, err := g.caller(req.Extra)
	if err != nil {
		return nil, err
	}
	hits, err := g.searcher.Search(embeddingFor(ctx, caller, traceID(headerOf(req.Extra))), in.Query, docs, k)
	note := ""
	if err != nil && fault.KindOf(err) != fault.KindInvalid && ctx.Err() == nil {
		// The embedder failed (a function's error, its deadline): BM25 still ranks.
		g.log.WarnContext(ctx, "tool_search ranks by BM25 alone", "error", err)
		note = "Ranked by BM25 alone: the embedder could not be reached.\n"
		hits, err = g.lexical.Search(ctx, in.Query, docs, k)
	}
	if err != nil {
		if kind, field, msg := fault.Public(err); kind == fault.KindInvalid {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: field + ": " + msg}}}, nil
		}
		g.log.ErrorContext(ctx, "tool_search failed", "error", err)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "tool_search could not rank the tools; retry"}}}, nil
	}
	out := struct {
		Tools []foundTool `json:"tools"`
		// Ranking is "bm25" when the embedder failed and BM25 ranked alone.
		Ranking string `json:"ranking,omitempty"`
	}{Tools: make([]foundTool, 0, len(hits))}
	if note != "" {
		out.Ranking = "bm25"
	}
	var text strings.Builder
	text.WriteString(note)
	for _, h := range hits {
		t := tools[h.Index]
		out.Tools = append(out.Tools, foundTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema})
		fmt.Fprintf(&text, "%s: %s\n", t.Name, t.Title)
	}
	if len(hits) == 0 {
		text.WriteString("No tool you may call matches; rephrase what it should do.")
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool_search: encoding its result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text.String()}}, StructuredContent: json.RawMessage(raw)}, nil
}

// callableTools returns what tools/list shows the request under profile
// p, but tool_search itself: the catalog's public tools its token's scopes
// allow, with their schemas, in catalog order, then its connectors' tools
// (when p enables their group), each allowed by p.
func (g *Gateway) callableTools(ctx context.Context, extra *mcp.RequestExtra, p profile.Profile) []*mcp.Tool {
	listed := g.listed()
	var tools []*mcp.Tool
	for _, t := range g.opts.Catalog.Tools() {
		if full, ok := listed[t.Name]; ok {
			tools = append(tools, full)
		}
	}
	tools, _ = g.visibleTools(extra, tools)
	if call, ok := g.proxy(catalog.ConnectorCallTool); ok && p.EnablesGroup(call.Group) {
		if l, ok := g.listing(ctx, extra); ok {
			tools = append(tools, g.usableTools(extra, l.Tools)...)
		}
	}
	return g.permitted(p, tools)
}
