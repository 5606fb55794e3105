// Package catalog is the single source of truth for what Switchboard offers:
// every tool, resource and prompt, with its schemas, the function that serves
// it, its visibility and its limits. The gateway's tools/list, the dispatch
// table, the SAM template's function list, the sample events and the README's
// tool table all come from it; tests fail when any of them disagrees.
//
// Each family has one file here holding its entries; [Default] lists the
// families in one place. The catalog describes tools without importing the
// code that serves them: their JSON Schemas, inferred from the domain types
// by package catalog/toolschema, reach it through the generated snapshot
// [SnapshotFile], so that a binary links only the domain code of the
// functions it runs:
//
//	cat := catalog.Default()
//	t, ok := cat.Tool("memory_add_message")
//	// t.Function == "memory/add_message": the folder under functions/ and the Lambda it deploys as
package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Visibility says who may see and call a tool.
type Visibility string

const (
	// Public tools are listed to hosts and callable by them.
	Public Visibility = "public"
	// Internal tools are called by pipelines but never listed to or callable by hosts.
	Internal Visibility = "internal"
)

// Access is what a function may do to a store; the template grants exactly that.
type Access string

// The levels of [Access].
const (
	NoAccess Access = ""
	Read     Access = "read"
	// ReadPut reads and puts items but deletes none: a table level for
	// functions that only record (the rag pipeline tools' health counters).
	ReadPut   Access = "read-put"
	ReadWrite Access = "read-write"
)

// Limits are a function's resource limits, enforced by Lambda on AWS and by
// the in-process invoker locally.
type Limits struct {
	Timeout  time.Duration
	MemoryMB int
	// ReservedConcurrency caps concurrent executions; zero leaves the function
	// on the account's shared pool.
	ReservedConcurrency int
}

// Tool is one MCP tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Family      string
	// Function is the path under functions/ of the Lambda that serves the
	// tool, such as "memory/add_message".
	Function string
	// InputSchema and OutputSchema are the JSON of the tool's input and
	// output JSON Schemas, both of type object: what hosts are listed, and
	// what the tool's function validates arguments against. [Default]'s
	// come from [SnapshotFile]; they are empty for a tool the snapshot lacks
	// until go run ./scripts/generate has written it. Callers must not
	// modify them.
	InputSchema, OutputSchema json.RawMessage
	Annotations               *mcp.ToolAnnotations
	Visibility                Visibility
	// GatewayCalls marks an internal tool the gateway itself calls (the
	// connectors' proxy, which serves proxied calls, lists and approvals):
	// no host lists it, but its function is one the gateway may invoke.
	GatewayCalls bool
	// Mutates marks a tool that changes state: each call appends an audit event.
	Mutates bool
	// Deletes marks a tool whose function deletes table items (a delete or
	// a transaction's delete): only such functions are granted
	// dynamodb:DeleteItem, and any other gets a table that refuses deletes
	// (lambdafn), so a missing mark fails the tests, not a deployment.
	Deletes bool
	Limits  Limits
	// Table and Blobs are the function's store access.
	Table, Blobs Access
	// BlobKeys, if set, narrows Blobs to the object keys these patterns
	// match, in the wildcard syntax of IAM resources (* matches any run of
	// characters, "/" included); if empty, Blobs covers every key.
	BlobKeys []string
	// Invokes names the functions (paths under functions/) the tool's
	// function calls itself, through an invoke.Invoker (Deps.Invoker): the
	// template gives it their names' prefix and lets it invoke exactly those.
	Invokes []string
	// MaxRequestBytes, if set, raises the request body limit of this tool's
	// calls above [DefaultRequestBytes], to fit its largest valid arguments
	// (see limits.go); it may not exceed [MaxRequestBytes].
	MaxRequestBytes int64
	// Example holds sample arguments, used for the sample events and the docs.
	Example json.RawMessage
	// Compat is the tool's method name on the compatibility JSON-RPC endpoint
	// of the memory server seed ("memory/add_message"), if it has one there.
	Compat string
	// PipelineTask, if set, makes the tool a step of the RAG pipeline: it is
	// the substitution of the state machine's definition
	// (infra/statemachines/rag_pipeline.asl.json) that names the function a
	// Task state invokes, such as "RephraseFunctionArn". See [PipelineTask].
	PipelineTask string
	// Pipeline marks a tool that runs the RAG pipeline state machine
	// (Deps.Pipeline): the template gives its function the state machine's
	// ARN and lets it start executions of that one state machine.
	Pipeline bool
	// Embeds and Generates mark a tool that calls the configured embedder or
	// generator: the template gives its function the provider settings and,
	// when the provider is Bedrock, bedrock:InvokeModel on that model.
	Embeds, Generates bool
	// StreamsReply marks a tool that Generates and streams the model's
	// reply as it comes (provider.Streamer): on Bedrock, ConverseStream,
	// which the template allows (bedrock:InvokeModelWithResponseStream)
	// to its function alone.
	StreamsReply bool
	// MultiVector marks a tool that calls the configured multi-vector
	// embedder of late interaction (Deps.MultiVector): the template gives
	// its function the multi-vector settings and its key's secret.
	MultiVector bool
	// TraceArgument marks a tool whose input has an optional trace_id: when
	// it is a valid trace id, the call runs under that trace instead of the
	// request's (its audit events and the result's _meta name it), so that a
	// caller can group its calls (seed 003's correlation).
	TraceArgument bool
	// Connects marks a tool that reaches tenants' upstream MCP servers (the
	// connectors family): the template gives its function the connector
	// credentials' KMS key and the outbound host policy.
	Connects bool
	// KeyUse is what a tool that Connects does with that key: the key's
	// policy lets its function do that alone.
	KeyUse KeyUse
	// Progress marks a tool that reports progress while it runs
	// (lambdafn.ReportProgress): the gateway asks its function for a
	// streamed answer when the client gave a progress token, and relays
	// each notification as it arrives; its function is started able to
	// answer so (a response stream).
	Progress bool
	// Searches marks a tool that searches the web (the web search family):
	// the template gives its function the search backends' settings and
	// the Brave API key's secret.
	Searches bool
	// Group is the tool group a profile enables it by (an API key's
	// profile, a thread's tools_enabled): one of [Groups], or "" for a tool
	// in none, which no group setting hides. On connector_call it is the
	// group of every proxied tool (<connector>__<tool>) it serves.
	Group string
}

// The tool groups of seed 000's Settings.tools_enabled: a profile or a
// thread that does not enable a group sees none of its tools.
const (
	// GroupVectorSearch holds the optimizer_vs-* tools hosts call (the
	// retriever and the store list); the pipeline's steps are internal.
	GroupVectorSearch = "Vector Search"
	// GroupConnectors holds every connector's proxied tools.
	GroupConnectors = "Connectors"
	// GroupWebSearch holds the web search tools.
	GroupWebSearch = "Web Search"
)

// Groups returns the tool groups, in the order settings show them.
func Groups() []string { return []string{GroupVectorSearch, GroupConnectors, GroupWebSearch} }

// KeyUse is what a function does with the connector credentials' KMS key.
type KeyUse string

// The uses of the connector credentials' key.
const (
	// KeySealOpen, the zero value, seals and opens credentials.
	KeySealOpen KeyUse = ""
	// KeySeal seals credentials only (KMS GenerateDataKey).
	KeySeal KeyUse = "seal"
	// KeyOpen opens credentials only (KMS Decrypt), to reach upstreams.
	KeyOpen KeyUse = "open"
	// KeyNone neither seals nor opens them.
	KeyNone KeyUse = "none"
)

func (u KeyUse) seals() bool { return u == KeySealOpen || u == KeySeal }
func (u KeyUse) opens() bool { return u == KeySealOpen || u == KeyOpen }

// Trigger is a function that no host calls: an event source invokes it, as
// S3 uploads invoke the vector indexer and a schedule the connectors'
// scheduled sync. Families list theirs next to their tools; [Default] adds
// them with [Catalog.WithTriggers].
type Trigger struct {
	// Function is its path under functions/.
	Function    string
	Family      string
	Description string
	Limits      Limits
	// Table and Blobs are its store access.
	Table, Blobs      Access
	Embeds, Generates bool
	// Connects and KeyUse: see [Tool].
	Connects bool
	KeyUse   KeyUse
	// Deletes: see [Tool].
	Deletes bool
	// S3 names the events of the template's bucket that invoke it; Schedule
	// is the EventBridge Scheduler expression that invokes it instead, such
	// as "rate(5 minutes)".
	S3       *S3Events
	Schedule string
}

// S3Events are object events of the template's bucket: Events (such as
// "s3:ObjectCreated:*") on keys that begin with Prefix and end with Suffix.
// S3 filters cannot match the middle of a key, so a handler must ignore keys
// it was not meant for.
type S3Events struct {
	Events         []string
	Prefix, Suffix string
}

// PipelineTask is one Task state of the RAG pipeline's state machine: the
// definition's substitution that names its Lambda, the function (its path
// under functions/) and the tool it calls. The template fills each
// substitution with its function's ARN and lets the state machine invoke
// exactly these functions; the in-process runner maps them back to paths.
type PipelineTask struct {
	Substitution string
	Function     string
	Tool         string
}

// Resource is one MCP resource, or a template for a family of them.
type Resource struct {
	// URI names a fixed resource; URITemplate (RFC 6570, level 1) a family.
	// Exactly one is set.
	URI         string
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Family      string
	// Function serves resources/read for these URIs, and resources/list when Lists is set.
	Function string
	// Lists marks a function that enumerates the caller's concrete resources.
	Lists        bool
	Limits       Limits
	Table, Blobs Access
	// Example is a sample URI, used for the sample events.
	Example string
}

// Prompt is one MCP prompt. The gateway renders prompts itself.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []*mcp.PromptArgument
	// Render writes the prompt for args. It may ask the client for input as
	// a tool does, returning an *elicit.InputRequired; ctx carries the round
	// (elicit.FromContext).
	Render func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error)
	// Tool, if set instead of Render, is the catalog tool whose function
	// renders the prompt for the caller (a tenant may override its text):
	// the gateway calls it with {"name", "arguments"} and answers its
	// structured content.
	Tool string
	// Complete, if set, suggests values for an argument given its prefix.
	Complete func(arg, prefix string) []string
	// Group is the tool group a profile enables it by, as [Tool.Group]:
	// a prompt is in the group of the tools that use it (seed 000's
	// optimizer_vs-* and optimizer_context-default serve the vector
	// search steps), or in none.
	Group string
}

// Function is one deployable tool function and what it needs.
type Function struct {
	Path   string
	Family string
	Limits Limits
	Table  Access
	Blobs  Access
	// BlobKeys and Invokes: see [Tool]. BlobKeys is empty, every key, if
	// any entry it serves has blob access without BlobKeys.
	BlobKeys []string
	Invokes  []string
	// Tools and Resources are what it serves; both are empty for a trigger.
	Tools     []string
	Resources []string
	// Pipeline, Embeds, Generates, StreamsReply, MultiVector, Connects, Deletes, Progress and Searches: see [Tool]; true if any entry it serves says so.
	Pipeline, Embeds, Generates, StreamsReply, MultiVector, Connects, Deletes, Progress, Searches bool
	// Seals and Opens: some entry it serves that Connects seals, or opens,
	// connector credentials ([Tool.KeyUse]).
	Seals, Opens bool
	// Public reports that it serves a public tool, a resource or a tool the
	// gateway calls ([Tool.GatewayCalls]): one the gateway may invoke.
	// Internal steps and triggers are not.
	Public bool
	// Trigger is set for a function an event source invokes.
	Trigger *Trigger
}

// Catalog is a set of tools, resources and prompts. It is immutable and safe
// for concurrent use.
type Catalog struct {
	tools     []*Tool
	resources []*Resource
	prompts   []*Prompt
	byName    map[string]*Tool
	triggers  []*Trigger
	functions []Function
	tasks     []PipelineTask
}

// New returns a catalog of the given entries, checking that names are unique
// and every entry is complete.
func New(tools []*Tool, resources []*Resource, prompts []*Prompt) (*Catalog, error) {
	return build(tools, resources, prompts, nil)
}

// build returns a catalog of the given entries and triggers, checked as
// [New] and [Catalog.WithTriggers] check them.
func build(tools []*Tool, resources []*Resource, prompts []*Prompt, triggers []*Trigger) (*Catalog, error) {
	if err := check(tools, resources, prompts, triggers); err != nil {
		return nil, err
	}
	c := assemble(tools, resources, prompts, triggers)
	if err := checkInvokes(c.functions); err != nil {
		return nil, err
	}
	return c, nil
}

// check checks that names are unique and every entry is complete.
func check(tools []*Tool, resources []*Resource, prompts []*Prompt, triggers []*Trigger) error {
	names := make(map[string]*Tool, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		if err := checkTool(t); err != nil {
			return err
		}
		if names[t.Name] != nil {
			return fmt.Errorf("catalog: tool %q defined twice", t.Name)
		}
		names[t.Name] = t
		if t.PipelineTask == "" {
			continue
		}
		if seen["task:"+t.PipelineTask] {
			return fmt.Errorf("catalog: tool %q: pipeline task %s is another tool's", t.Name, t.PipelineTask)
		}
		seen["task:"+t.PipelineTask] = true
	}
	for _, r := range resources {
		key := r.URI + r.URITemplate
		if (r.URI == "") == (r.URITemplate == "") || r.Name == "" || r.Function == "" || seen[key] {
			return fmt.Errorf("catalog: resource %q: needs exactly one of URI and URITemplate, a name and a function, once", key)
		}
		seen[key] = true
	}
	for _, p := range prompts {
		if p.Name == "" || (p.Render == nil) == (p.Tool == "") || seen["prompt:"+p.Name] {
			return fmt.Errorf("catalog: prompt %q: needs a name and a renderer or a tool, once", p.Name)
		}
		if t, ok := names[p.Tool]; p.Tool != "" && (!ok || !t.GatewayCalls) {
			return fmt.Errorf("catalog: prompt %q: its tool %q is not a tool of the catalog the gateway calls", p.Name, p.Tool)
		}
		if p.Group != "" && !slices.Contains(Groups(), p.Group) {
			return fmt.Errorf("catalog: prompt %q is in group %q, which is not one of %q", p.Name, p.Group, Groups())
		}
		seen["prompt:"+p.Name] = true
	}
	return checkTriggers(tools, resources, triggers)
}

// assemble returns the catalog of entries [check] accepts, without checking
// them again: [Default]'s are fixed, and its test checks them, so that no
// function pays for the checks at each cold start.
func assemble(tools []*Tool, resources []*Resource, prompts []*Prompt, triggers []*Trigger) *Catalog {
	c := &Catalog{tools: tools, resources: resources, prompts: prompts, triggers: triggers, byName: make(map[string]*Tool, len(tools))}
	for _, t := range tools {
		c.byName[t.Name] = t
		if t.PipelineTask != "" {
			c.tasks = append(c.tasks, PipelineTask{Substitution: t.PipelineTask, Function: t.Function, Tool: t.Name})
		}
	}
	c.functions = c.buildFunctions()
	return c
}

func checkTool(t *Tool) error {
	switch {
	case t.Name == "" || t.Title == "" || t.Description == "":
		return fmt.Errorf("catalog: tool %q needs a name, a title and a description", t.Name)
	case t.Function == "" || t.Family == "":
		return fmt.Errorf("catalog: tool %q needs a family and a function", t.Name)
	case t.Visibility != Public && t.Visibility != Internal:
		return fmt.Errorf("catalog: tool %q has visibility %q", t.Name, t.Visibility)
	case t.Mutates && t.Table != ReadWrite:
		return fmt.Errorf("catalog: tool %q mutates, so it writes audit events, so it needs table read-write", t.Name)
	case t.Deletes && t.Table != ReadWrite:
		return fmt.Errorf("catalog: tool %q deletes items, so it needs table read-write", t.Name)
	case t.Blobs == ReadPut:
		return fmt.Errorf("catalog: tool %q: %s is a level of table access only", t.Name, ReadPut)
	case t.Limits.Timeout <= 0 || t.Limits.MemoryMB <= 0:
		return fmt.Errorf("catalog: tool %q needs a timeout and a memory size", t.Name)
	case t.MaxRequestBytes > MaxRequestBytes:
		return fmt.Errorf("catalog: tool %q accepts requests of %d bytes, more than the deployed gateway can receive (%d)", t.Name, t.MaxRequestBytes, MaxRequestBytes)
	case len(t.BlobKeys) > 0 && t.Blobs == NoAccess:
		return fmt.Errorf("catalog: tool %q narrows its blob access to keys, but has none", t.Name)
	case t.Group != "" && !slices.Contains(Groups(), t.Group):
		return fmt.Errorf("catalog: tool %q is in group %q, which is not one of %q", t.Name, t.Group, Groups())
	}
	return nil
}

// checkInvokes checks that every function a function invokes is another
// function of the catalog that serves tools or resources: no event source
// passes an envelope to a trigger.
func checkInvokes(functions []Function) error {
	byPath := map[string]Function{}
	for _, f := range functions {
		byPath[f.Path] = f
	}
	for _, f := range functions {
		for _, p := range f.Invokes {
			if g, ok := byPath[p]; !ok || g.Trigger != nil || p == f.Path {
				return fmt.Errorf("catalog: function %s invokes %q, which is not another tool or resource function of the catalog", f.Path, p)
			}
		}
	}
	return nil
}

// WithTriggers returns a catalog of c's entries and triggers. A trigger's
// function serves no tool or resource: an event source is its only caller.
func (c *Catalog) WithTriggers(triggers ...*Trigger) (*Catalog, error) {
	// Its entries are checked and immutable; only the functions change.
	return build(c.tools, c.resources, c.prompts, append(slices.Clone(c.triggers), triggers...))
}

// checkTriggers checks that each trigger is complete and has a function of
// its own: one that serves no tool, resource or other trigger.
func checkTriggers(tools []*Tool, resources []*Resource, triggers []*Trigger) error {
	if len(triggers) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, t := range tools {
		used[t.Function] = true
	}
	for _, r := range resources {
		used[r.Function] = true
	}
	for _, t := range triggers {
		switch {
		case t.Function == "" || t.Family == "" || t.Description == "":
			return fmt.Errorf("catalog: trigger %q needs a function, a family and a description", t.Function)
		case used[t.Function]:
			return fmt.Errorf("catalog: trigger %q: the function also serves tools or another trigger", t.Function)
		case t.Limits.Timeout <= 0 || t.Limits.MemoryMB <= 0:
			return fmt.Errorf("catalog: trigger %q needs a timeout and a memory size", t.Function)
		case (t.S3 == nil || len(t.S3.Events) == 0) == (t.Schedule == ""):
			return fmt.Errorf("catalog: trigger %q needs its S3 events or a schedule, not both", t.Function)
		}
		used[t.Function] = true
	}
	return nil
}

// PipelineTasks returns the RAG pipeline's Task states, in catalog order.
func (c *Catalog) PipelineTasks() []PipelineTask { return c.tasks }

// Triggers returns every trigger.
func (c *Catalog) Triggers() []*Trigger { return c.triggers }

// Tools returns every tool, in catalog order.
func (c *Catalog) Tools() []*Tool { return c.tools }

// Resources returns every resource and resource template.
func (c *Catalog) Resources() []*Resource { return c.resources }

// Prompts returns every prompt.
func (c *Catalog) Prompts() []*Prompt { return c.prompts }

// Tool returns the tool named name.
func (c *Catalog) Tool(name string) (*Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Prompt returns the prompt named name.
func (c *Catalog) Prompt(name string) (*Prompt, bool) {
	i := slices.IndexFunc(c.prompts, func(p *Prompt) bool { return p.Name == name })
	if i < 0 {
		return nil, false
	}
	return c.prompts[i], true
}

// Functions returns every function the tools and resources need, sorted by
// path. A function serving several entries gets the largest limits and the
// widest access among them.
func (c *Catalog) Functions() []Function { return c.functions }

func (c *Catalog) buildFunctions() []Function {
	// The paths, sorted, give each function its place in the result; the
	// names of the tools and resources the functions serve share one array.
	paths := make([]string, 0, len(c.tools)+len(c.resources)+len(c.triggers))
	for _, t := range c.tools {
		paths = append(paths, t.Function)
	}
	for _, t := range c.triggers {
		paths = append(paths, t.Function)
	}
	for _, r := range c.resources {
		paths = append(paths, r.Function)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	out := make([]Function, len(paths))
	allKeys := make([]bool, len(paths)) // functions with some entry's blob access to every key
	served := make([]int, len(paths))   // how many tools and resources each serves
	index := func(path, family string) int {
		i, _ := slices.BinarySearch(paths, path)
		out[i].Path, out[i].Family = path, cmp.Or(out[i].Family, family)
		return i
	}
	merge := func(i int, l Limits, table, blobs Access, blobKeys []string) {
		f := &out[i]
		f.Limits.Timeout = max(f.Limits.Timeout, l.Timeout)
		f.Limits.MemoryMB = max(f.Limits.MemoryMB, l.MemoryMB)
		f.Limits.ReservedConcurrency = max(f.Limits.ReservedConcurrency, l.ReservedConcurrency)
		f.Table, f.Blobs = wider(f.Table, table), wider(f.Blobs, blobs)
		allKeys[i] = allKeys[i] || blobs != NoAccess && len(blobKeys) == 0
		f.BlobKeys = append(f.BlobKeys, blobKeys...)
	}
	for _, t := range c.tools {
		i := index(t.Function, t.Family)
		served[i]++
		merge(i, t.Limits, t.Table, t.Blobs, t.BlobKeys)
		f := &out[i]
		f.Pipeline, f.Embeds, f.Generates = f.Pipeline || t.Pipeline, f.Embeds || t.Embeds, f.Generates || t.Generates
		f.MultiVector, f.StreamsReply = f.MultiVector || t.MultiVector, f.StreamsReply || t.StreamsReply
		f.Connects, f.Progress, f.Searches = f.Connects || t.Connects, f.Progress || t.Progress, f.Searches || t.Searches
		f.Seals, f.Opens = f.Seals || t.Connects && t.KeyUse.seals(), f.Opens || t.Connects && t.KeyUse.opens()
		f.Deletes, f.Public = f.Deletes || t.Deletes, f.Public || t.Visibility == Public || t.GatewayCalls
		f.Invokes = append(f.Invokes, t.Invokes...)
	}
	for _, t := range c.triggers {
		i := index(t.Function, t.Family)
		merge(i, t.Limits, t.Table, t.Blobs, nil)
		f := &out[i]
		f.Trigger = t
		f.Embeds, f.Generates, f.Connects = f.Embeds || t.Embeds, f.Generates || t.Generates, f.Connects || t.Connects
		f.Seals, f.Opens = f.Seals || t.Connects && t.KeyUse.seals(), f.Opens || t.Connects && t.KeyUse.opens()
		f.Deletes = f.Deletes || t.Deletes
	}
	for _, r := range c.resources {
		i := index(r.Function, r.Family)
		served[i]++
		merge(i, r.Limits, r.Table, r.Blobs, nil)
		out[i].Public = true
	}
	names := make([]string, len(c.tools)+len(c.resources))
	for i := range out {
		f := &out[i]
		f.Tools, names = names[:0:served[i]], names[served[i]:]
		// BlobKeys and Invokes were appended to nil: f's own to sort.
		slices.Sort(f.BlobKeys)
		f.BlobKeys = slices.Clip(slices.Compact(f.BlobKeys))
		if allKeys[i] {
			f.BlobKeys = nil
		}
		slices.Sort(f.Invokes)
		f.Invokes = slices.Clip(slices.Compact(f.Invokes))
	}
	// Each function's tools, then its resources, in catalog order.
	for _, t := range c.tools {
		f := &out[index(t.Function, t.Family)]
		f.Tools = append(f.Tools, t.Name)
	}
	for i := range out {
		f := &out[i]
		if len(f.Tools) < served[i] {
			f.Resources = f.Tools[len(f.Tools):len(f.Tools):served[i]]
		}
		if f.Tools = slices.Clip(f.Tools); len(f.Tools) == 0 {
			f.Tools = nil
		}
	}
	for _, r := range c.resources {
		f := &out[index(r.Function, r.Family)]
		f.Resources = append(f.Resources, r.URI+r.URITemplate)
	}
	return out
}

func wider(a, b Access) Access {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// rank orders the levels of access, widest last.
func rank(a Access) int {
	return slices.Index([]Access{NoAccess, Read, ReadPut, ReadWrite}, a)
}

// Function returns the function at path.
func (c *Catalog) Function(path string) (Function, bool) {
	i, ok := slices.BinarySearchFunc(c.functions, path, func(f Function, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return Function{}, false
	}
	return c.functions[i], true
}

// ReservedConcurrency returns the reserved concurrency of the function at
// path, or zero (no limit) if the catalog gives it none or has no such
// function.
func (c *Catalog) ReservedConcurrency(path string) int {
	f, _ := c.Function(path)
	return f.Limits.ReservedConcurrency
}

// Timeout returns the timeout of the function at path, or zero if the catalog has no such function.
func (c *Catalog) Timeout(path string) time.Duration {
	f, _ := c.Function(path)
	return f.Limits.Timeout
}

func ptr[T any](v T) *T { return &v }

// Default returns the catalog of everything Switchboard ships, family by
// family. It is built once; the catalog is immutable.
var Default = sync.OnceValue(buildDefault)

// buildDefault builds [Default]'s catalog, which every function does at its
// cold start: its entries are fixed, so they are not checked here but by
// TestDefaultEntriesPassNewsChecks, as [New] would check them.
func buildDefault() *Catalog { return assemble(defaultEntries()) }

// defaultEntries returns [Default]'s entries, family by family.
func defaultEntries() ([]*Tool, []*Resource, []*Prompt, []*Trigger) {
	tools := slices.Concat(memoryTools(), operationsTools(), vectorTools(), careerTools(), ragTools(), ragStepTools(), connectorTools(), connectorProxyTools(), assistantTools(), webSearchTools(), chatTools())
	withChatInvokes(tools)
	withSnapshot(tools, schemasJSON)
	// The functions event sources invoke, family by family.
	triggers := slices.Concat(vectorTriggers(), connectorTriggers())
	return tools, memoryResources(), assistantPrompts(), triggers
}
