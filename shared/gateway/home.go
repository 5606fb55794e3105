package gateway

import (
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// InspectorVersion is the MCP Inspector the connection hints run: the one
// scripts/lib/node pins and the tests drive (a test keeps the two equal). It
// needs Node 22.19 or newer; on older Node, npx resolves an unpinned
// Inspector to an old release that refuses --header.
const InspectorVersion = "2.12.0"

// instructions is what the server tells a host about itself at initialize:
// what each family is for and where to start.
const instructions = "Switchboard gives agents tools in these families; tool_search finds one by what it does. " +
	"Memory: open a conversation with memory_get_or_create, append messages with memory_add_message, and before " +
	"answering fetch memory_get_context: the rolling summary plus every message after it. Older messages are " +
	"summarised automatically; memory_get_all_messages returns the full history. " +
	"Vector search and RAG: create a store with vector_store_create, add text, Markdown, PDF or DOCX documents with " +
	"vector_document_ingest, search them with optimizer_vs-retriever, or answer a question from them with rag_basic, " +
	"rag_basic_rerank or rag_crag (rag_health_check reports whether the pipelines work); rag_pylate_colbert ranks by late interaction. " +
	"Career: ingest_resume turns a resume into experience atoms, opportunity_create stores a job's requirements, " +
	"match_opportunity matches one against the atoms and validate_match_report checks a report; interactions " +
	"(interaction_create, interaction_apply_event) track a contact from draft to closed. " +
	"Connectors: register another MCP server with connector_create, check it with connector_verify and list its " +
	"tools with connector_sync; approval_policy_set decides whether its tools run, are refused or ask a person first. " +
	"Chat: chat answers a message of a conversation from your documents, connectors' tools and the model, " +
	"as POST /v1/chat/completions does for OpenAI clients. " +
	"Assistant: settings_get and settings_update hold a thread's settings (tools enabled, vector search, model, " +
	"system prompt), which optimizer_* tools read; prompt_override_set changes a prompt for your tenant, " +
	"prompt_override_get shows the one in force and prompt_override_reset restores the default. " +
	"Web search: web_search searches the web (title, url, snippet of each result; cached for a while), " +
	"duckduckgo_search answers as plain text. " +
	"Operations: every change is audited; get_audit_trace returns the events of the trace id each result carries in " +
	"_meta. A call with bad arguments fails naming the field and changes nothing."

// Hint is one way to connect a host to the server: a command, and what to
// do after it, if anything.
type Hint struct {
	Host, Command, Then string
}

// Hints returns how to connect hosts to the MCP endpoint at url. With
// keyRequired, the commands send the key in $SWITCHBOARD_KEY.
func Hints(url string, keyRequired bool) []Hint {
	header := ""
	if keyRequired {
		header = ` --header "Authorization: Bearer $SWITCHBOARD_KEY"`
	}
	inspector := "npx @modelcontextprotocol/inspector@" + InspectorVersion
	then := "then choose transport Streamable HTTP and URL " + url
	if keyRequired {
		then += ", with the header Authorization: Bearer <key>"
	}
	return []Hint{
		{"Claude Code", "claude mcp add --transport http switchboard " + url + header, ""},
		{"Inspector CLI (Node 22.19+)", inspector + " --cli " + url + " --transport http --method tools/list" + header, ""},
		{"Inspector UI (Node 22.19+)", inspector, then},
	}
}

// serveHome answers GET / with a page for people who open the server's
// address in a browser: what it is, its MCP URL and how to connect. It
// needs nothing from outside: no scripts, styles or images.
func (g *Gateway) serveHome(w http.ResponseWriter, r *http.Request) {
	url := baseURL(r) + "/mcp"
	keyRequired := g.opts.Anonymous == nil
	families := map[string]int{}
	var order []string
	for _, t := range g.opts.Catalog.Tools() {
		if t.Visibility != catalog.Public {
			continue
		}
		if families[t.Family] == 0 {
			order = append(order, t.Family)
		}
		families[t.Family]++
	}
	var b strings.Builder
	e := html.EscapeString
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>Switchboard MCP server</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}
code,pre{font-family:ui-monospace,monospace;background:#f3f3f3;border-radius:4px}pre{padding:.6rem;overflow-x:auto;white-space:pre-wrap}
code{padding:0 .2rem}h1{margin-bottom:.2rem}</style></head>
<body><h1>Switchboard</h1>
<p>This is a <a href="https://modelcontextprotocol.io">Model Context Protocol</a> server: tools for AI agents,
served to MCP hosts (Claude, Cursor, the MCP Inspector, any MCP client). This page is for people; hosts talk to the
endpoint below.</p>
<h2>MCP endpoint</h2>
`)
	fmt.Fprintf(&b, "<p><code>%s</code> (Streamable HTTP: JSON-RPC messages by POST)</p>\n", e(url))
	if keyRequired {
		b.WriteString("<p>Requests need an API key: <code>Authorization: Bearer &lt;key&gt;</code>. The commands below read it from <code>$SWITCHBOARD_KEY</code>.</p>\n")
	} else {
		fmt.Fprintf(&b, "<p>No API key is needed: requests act for tenant <code>%s</code>.</p>\n", e(g.opts.Anonymous.Tenant))
	}
	b.WriteString("<h2>Connect</h2>\n")
	for _, h := range Hints(url, keyRequired) {
		fmt.Fprintf(&b, "<p>%s:</p>\n<pre>%s</pre>\n", e(h.Host), e(h.Command))
		if h.Then != "" {
			fmt.Fprintf(&b, "<p>%s.</p>\n", e(strings.ToUpper(h.Then[:1])+h.Then[1:]))
		}
	}
	b.WriteString("<h2>Tools</h2>\n<ul>\n")
	for _, f := range order {
		fmt.Fprintf(&b, "<li>%s: %d %s</li>\n", e(f), families[f], map[bool]string{true: "tool", false: "tools"}[families[f] == 1])
	}
	b.WriteString("</ul>\n<p>Health: <a href=\"/health\">/health</a>.</p>\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Write([]byte(b.String()))
}
