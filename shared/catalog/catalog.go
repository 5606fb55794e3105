// Package catalog is the single source of truth for what Switchboard offers:
// every tool, resource and prompt, with its schemas, the function that serves
// it, its visibility and its limits. The gateway's tools/list, the dispatch
// table, the SAM template's function list, the sample events and the README's
// tool table all come from it; tests fail when any of them disagrees.
//
// Each family has one file here holding its entries; [Default] lists the
// families in one place:
//
//	cat := catalog.Default()
//	t, ok := cat.Tool("memory_add_message")
//	// t.Function == "memory/add_message": the folder under functions/ and the Lambda it deploys as
package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
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
	// Input and Output return the tool's input and output JSON Schemas, both
	// of type object. They are called only when a schema is needed, not
	// when the catalog is built: inferring every tool's schemas by
	// reflection took ~10 ms of each cold start, and a tool function needs
	// only its own tool's input schema. [SchemaFor] gives functions that
	// build their schema on the first call only. Hosts see them as
	// [Tool.InputJSON] and [Tool.OutputJSON] give them.
	Input, Output func() *jsonschema.Schema
	Annotations   *mcp.ToolAnnotations
	Visibility    Visibility
	// Mutates marks a tool that changes state: each call appends an audit event.
	Mutates bool
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
	// Pipeline marks a tool that runs the RAG pipeline state machine
	// (Deps.Pipeline): the template gives its function the state machine's
	// ARN and lets it start executions of that one state machine.
	Pipeline bool
	// Embeds and Generates mark a tool that calls the configured embedder or
	// generator: the template gives its function the provider settings and,
	// when the provider is Bedrock, bedrock:InvokeModel on that model.
	Embeds, Generates bool

	// snapshot marks the tools of [Default], whose schemas' JSON
	// schemas.json holds; see [Tool.InputJSON]. A copy of such a tool keeps
	// it, so give other schemas only to a new Tool.
	snapshot bool
}

// Trigger is a function that no host calls: an event source invokes it, as
// S3 uploads invoke the vector indexer. Families list theirs next to their
// tools; [Default] adds them with [Catalog.WithTriggers].
type Trigger struct {
	// Function is its path under functions/.
	Function    string
	Family      string
	Description string
	Limits      Limits
	// Table and Blobs are its store access.
	Table, Blobs      Access
	Embeds, Generates bool
	// S3 names the events of the template's bucket that invoke it.
	S3 *S3Events
}

// S3Events are object events of the template's bucket: Events (such as
// "s3:ObjectCreated:*") on keys that begin with Prefix and end with Suffix.
// S3 filters cannot match the middle of a key, so a handler must ignore keys
// it was not meant for.
type S3Events struct {
	Events         []string
	Prefix, Suffix string
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
	// Complete, if set, suggests values for an argument given its prefix.
	Complete func(arg, prefix string) []string
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
	// Pipeline, Embeds and Generates: see [Tool]; true if any entry it serves says so.
	Pipeline, Embeds, Generates bool
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
	timeouts  map[string]time.Duration
}

// New returns a catalog of the given entries, checking that names are unique
// and every entry is complete.
func New(tools []*Tool, resources []*Resource, prompts []*Prompt) (*Catalog, error) {
	c := &Catalog{tools: tools, resources: resources, prompts: prompts, byName: map[string]*Tool{}}
	for _, t := range tools {
		if err := checkTool(t); err != nil {
			return nil, err
		}
		if c.byName[t.Name] != nil {
			return nil, fmt.Errorf("catalog: tool %q defined twice", t.Name)
		}
		c.byName[t.Name] = t
	}
	seen := map[string]bool{}
	for _, r := range resources {
		key := r.URI + r.URITemplate
		if (r.URI == "") == (r.URITemplate == "") || r.Name == "" || r.Function == "" || seen[key] {
			return nil, fmt.Errorf("catalog: resource %q: needs exactly one of URI and URITemplate, a name and a function, once", key)
		}
		seen[key] = true
	}
	for _, p := range prompts {
		if p.Name == "" || p.Render == nil || seen["prompt:"+p.Name] {
			return nil, fmt.Errorf("catalog: prompt %q: needs a name and a renderer, once", p.Name)
		}
		seen["prompt:"+p.Name] = true
	}
	c.functions = c.buildFunctions()
	if err := checkInvokes(c.functions); err != nil {
		return nil, err
	}
	c.timeouts = map[string]time.Duration{}
	for _, f := range c.functions {
		c.timeouts[f.Path] = f.Limits.Timeout
	}
	return c, nil
}

func checkTool(t *Tool) error {
	switch {
	case t.Name == "" || t.Title == "" || t.Description == "":
		return fmt.Errorf("catalog: tool %q needs a name, a title and a description", t.Name)
	case t.Input == nil || t.Output == nil:
		// Their type, object, is checked when they are built, by the tests
		// of Default: building them here would undo their laziness.
		return fmt.Errorf("catalog: tool %q needs input and output schemas", t.Name)
	case t.Function == "" || t.Family == "":
		return fmt.Errorf("catalog: tool %q needs a family and a function", t.Name)
	case t.Visibility != Public && t.Visibility != Internal:
		return fmt.Errorf("catalog: tool %q has visibility %q", t.Name, t.Visibility)
	case t.Mutates && t.Table != ReadWrite:
		return fmt.Errorf("catalog: tool %q mutates, so it writes audit events, so it needs table read-write", t.Name)
	case t.Blobs == ReadPut:
		return fmt.Errorf("catalog: tool %q: %s is a level of table access only", t.Name, ReadPut)
	case t.Limits.Timeout <= 0 || t.Limits.MemoryMB <= 0:
		return fmt.Errorf("catalog: tool %q needs a timeout and a memory size", t.Name)
	case t.MaxRequestBytes > MaxRequestBytes:
		return fmt.Errorf("catalog: tool %q accepts requests of %d bytes, more than the deployed gateway can receive (%d)", t.Name, t.MaxRequestBytes, MaxRequestBytes)
	case len(t.BlobKeys) > 0 && t.Blobs == NoAccess:
		return fmt.Errorf("catalog: tool %q narrows its blob access to keys, but has none", t.Name)
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
	out, err := New(c.tools, c.resources, c.prompts)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, f := range out.functions {
		used[f.Path] = true
	}
	for _, t := range c.triggers {
		used[t.Function] = true
	}
	for _, t := range triggers {
		switch {
		case t.Function == "" || t.Family == "" || t.Description == "":
			return nil, fmt.Errorf("catalog: trigger %q needs a function, a family and a description", t.Function)
		case used[t.Function]:
			return nil, fmt.Errorf("catalog: trigger %q: the function also serves tools or another trigger", t.Function)
		case t.Limits.Timeout <= 0 || t.Limits.MemoryMB <= 0:
			return nil, fmt.Errorf("catalog: trigger %q needs a timeout and a memory size", t.Function)
		case t.S3 == nil || len(t.S3.Events) == 0:
			return nil, fmt.Errorf("catalog: trigger %q needs its events", t.Function)
		}
		used[t.Function] = true
	}
	out.triggers = append(append([]*Trigger(nil), c.triggers...), triggers...)
	out.functions = out.buildFunctions()
	if err := checkInvokes(out.functions); err != nil {
		return nil, err
	}
	for _, f := range out.functions {
		out.timeouts[f.Path] = f.Limits.Timeout
	}
	return out, nil
}

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
	byPath := map[string]*Function{}
	allKeys := map[string]bool{} // functions with some entry's blob access to every key
	get := func(path, family string) *Function {
		f := byPath[path]
		if f == nil {
			f = &Function{Path: path, Family: family}
			byPath[path] = f
		}
		return f
	}
	merge := func(f *Function, l Limits, table, blobs Access, blobKeys []string) {
		f.Limits.Timeout = max(f.Limits.Timeout, l.Timeout)
		f.Limits.MemoryMB = max(f.Limits.MemoryMB, l.MemoryMB)
		f.Limits.ReservedConcurrency = max(f.Limits.ReservedConcurrency, l.ReservedConcurrency)
		f.Table, f.Blobs = wider(f.Table, table), wider(f.Blobs, blobs)
		if blobs != NoAccess && len(blobKeys) == 0 {
			allKeys[f.Path] = true
		}
		f.BlobKeys = append(f.BlobKeys, blobKeys...)
	}
	for _, t := range c.tools {
		f := get(t.Function, t.Family)
		f.Tools = append(f.Tools, t.Name)
		merge(f, t.Limits, t.Table, t.Blobs, t.BlobKeys)
		f.Pipeline, f.Embeds, f.Generates = f.Pipeline || t.Pipeline, f.Embeds || t.Embeds, f.Generates || t.Generates
		f.Invokes = append(f.Invokes, t.Invokes...)
	}
	for _, t := range c.triggers {
		f := get(t.Function, t.Family)
		f.Trigger = t
		merge(f, t.Limits, t.Table, t.Blobs, nil)
		f.Embeds, f.Generates = f.Embeds || t.Embeds, f.Generates || t.Generates
	}
	for _, r := range c.resources {
		f := get(r.Function, r.Family)
		f.Resources = append(f.Resources, r.URI+r.URITemplate)
		merge(f, r.Limits, r.Table, r.Blobs, nil)
	}
	out := make([]Function, 0, len(byPath))
	for _, f := range byPath {
		f.BlobKeys = slices.Compact(slices.Sorted(slices.Values(f.BlobKeys)))
		if allKeys[f.Path] {
			f.BlobKeys = nil
		}
		f.Invokes = slices.Compact(slices.Sorted(slices.Values(f.Invokes)))
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func wider(a, b Access) Access {
	rank := map[Access]int{NoAccess: 0, Read: 1, ReadPut: 2, ReadWrite: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Timeout returns the timeout of the function at path, or zero if the catalog has no such function.
func (c *Catalog) Timeout(path string) time.Duration { return c.timeouts[path] }

// SchemaFor returns a function that infers the JSON Schema of T, as tool
// entries declare their input and output, and lets patch tighten it with the
// constraints Go types cannot express (lengths, patterns, enums, ranges). The
// function builds the schema on its first call and returns that schema every
// time; it panics if T has no schema: entries are fixed, and the catalog
// tests build them all.
func SchemaFor[T any](patch func(*jsonschema.Schema)) func() *jsonschema.Schema {
	return sync.OnceValue(func() *jsonschema.Schema {
		s, err := jsonschema.For[T](nil)
		if err != nil {
			panic(fmt.Sprintf("catalog: schema of %T: %v", *new(T), err))
		}
		singleTypes(s)
		if patch != nil {
			patch(s)
		}
		return s
	})
}

// schemaFor is SchemaFor with a patch of the top-level properties.
func schemaFor[T any](patch func(props map[string]*jsonschema.Schema)) func() *jsonschema.Schema {
	return SchemaFor[T](func(s *jsonschema.Schema) {
		if patch != nil {
			patch(s.Properties)
		}
	})
}

// singleTypes replaces the ["null", X] types inferred for Go slices, maps and
// pointers with X: Switchboard omits such a field or sends it empty, never
// null, and a single type is what every MCP client handles.
func singleTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		singleTypes(p)
	}
	singleTypes(s.Items)
	singleTypes(s.AdditionalProperties)
}

func ptr[T any](v T) *T { return &v }

// Default returns the catalog of everything Switchboard ships, family by
// family. It is built once; the catalog is immutable.
var Default = sync.OnceValue(func() *Catalog {
	c, err := New(
		slices.Concat(memoryTools(), operationsTools(), vectorTools(), careerTools(), ragTools(), ragStepTools()),
		memoryResources(),
		nil,
	)
	if err != nil {
		panic(err) // the entries above are fixed; TestDefaultCatalogIsValid catches this
	}
	for _, t := range c.tools {
		t.snapshot = true
	}
	// The functions event sources invoke, family by family.
	triggers := slices.Concat(vectorTriggers())
	if c, err = c.WithTriggers(triggers...); err != nil {
		panic(err)
	}
	return c
})
