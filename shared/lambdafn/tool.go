// Package lambdafn turns domain code into the Lambda handlers of tool and
// resource functions, and starts them. A handler decodes the [invoke.Request]
// envelope, validates the arguments against the catalog schema, calls the
// domain method with the caller the gateway authenticated, appends an audit
// event for calls that change state, logs one structured line, writes one
// CloudWatch embedded-metric record (package metrics), and answers an
// [invoke.Response]. A [Function] is one deployable function built that way;
// [Start] runs it in Lambda, and package local runs any set of them in one
// process.
//
//	var AddMessage = lambdafn.Method("memory_add_message", service, (*memory.Service).AddMessage)
//	func main() { lambdafn.Start(AddMessage, lambdafn.Openers{}) } // functions/memory/add_message
package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/rawjson"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Deps are what handlers are built from: the stores and providers a function
// was configured with.
type Deps struct {
	Table      store.Table
	Blobs      store.Blobs
	Summarizer provider.Summarizer
	Embedder   provider.Embedder
	Generator  provider.Generator
	// MultiVector embeds late interaction's token vectors; nil where none is configured.
	MultiVector multivector.Embedder
	// Pipeline runs the RAG pipeline state machine; nil where none is configured.
	Pipeline pipeline.Runner
	// Invoker calls the functions a function invokes itself (the catalog's
	// Tool.Invokes): through the Lambda API on AWS, in process locally; nil
	// where none is configured.
	Invoker invoke.Invoker
	// Sealer seals and opens connector credentials (shared/seal's kms or
	// localkey), and CheckURL and HTTPClient guard the requests to tenants'
	// upstream servers (shared/netguard): what the connectors family's
	// functions open (config/connectors); nil elsewhere.
	Sealer     Sealer
	CheckURL   func(ctx context.Context, raw string) (*url.URL, error)
	HTTPClient *http.Client
	// ConnectorCacheTTL is how long connectors' cached capabilities stay
	// fresh (config/connectors); zero means package connector's default.
	ConnectorCacheTTL time.Duration
	// WebSearch holds the *websearch.Options config/search opens (the
	// backends, the cache's TTL, the tenants' rate), which package
	// handlers/websearchfn reads; nil where none is configured. It is not
	// typed so, so that lambdafn, which every function links, links no web
	// search code.
	WebSearch any
	// Logger receives one line per call. If nil, logs are discarded.
	Logger *slog.Logger
	// Metrics receives one record per call (package metrics); nil
	// (locally) writes none.
	Metrics *metrics.Emitter
	// Later runs work after a call's answer (package later): the health
	// record of a pipeline call. Nil where the work is done before answering.
	Later *later.Queue
	// Quotas are the storage quotas of a tenant without an override. If nil,
	// defaults to [quota.DefaultLimits].
	Quotas *quota.Limits
	// Limiter holds the tool calls a function makes for its caller (the
	// chat's) to the caller's rate limits, as the gateway holds the
	// caller's own calls; nil where the limits are off.
	Limiter *ratelimit.Limiter
	// OwnTable reads the items outside every tenant's keys (the operators'
	// quota overrides) where Table's client signs as each call's tenant
	// (config.OpenOwnTable); nil means Table.
	OwnTable store.Table
}

func (d Deps) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

// Sealer seals secrets under an encryption context; shared/seal's backends
// and connector.Sealer have its method set.
type Sealer interface {
	Seal(ctx context.Context, plaintext []byte, ec map[string]string) ([]byte, error)
	Open(ctx context.Context, sealed []byte, ec map[string]string) ([]byte, error)
}

// Func is a domain method serving one tool.
type Func[In, Out any] func(ctx context.Context, c tenant.Caller, in In) (Out, error)

// Tool returns the Lambda handler of tool t, served by fn. Its input schema
// is compiled on first use, off the cold start: the quick check from its
// JSON, and jsonschema-go's validator only when arguments need it (a call
// the check is not certain of), since decoding and resolving a schema cost
// a millisecond or more of a cold start. A schema that does not resolve
// fails every call of the tool; TestDefaultCatalogIsValid resolves every
// schema of the default catalog.
func Tool[In, Out any](t *catalog.Tool, d Deps, fn Func[In, Out]) lambda.Handler {
	h := &toolHandler[In, Out]{tool: t, check: sync.OnceValue(func() *argsCheck { return compileCheck(t.InputSchema) }),
		input: sync.OnceValues(func() (*validator, error) { return resolveInput(t) }),
		flat:  newFlatArgs(reflect.TypeFor[In]()),
		fn:    fn, table: d.Table, audit: audit.New(d.Table, nil), log: d.logger().With("tool", t.Name), metrics: d.Metrics}
	return h
}

// validator is a tool's input schema, decoded and resolved for validation.
type validator struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

func resolveInput(t *catalog.Tool) (*validator, error) {
	schema := &jsonschema.Schema{}
	if err := json.Unmarshal(t.InputSchema, schema); err != nil {
		return nil, fmt.Errorf("input schema of %s: %w (run go run ./scripts/generate)", t.Name, err)
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("input schema of %s: %w", t.Name, err)
	}
	return &validator{schema: schema, resolved: rs}, nil
}

// Invoke implements [lambda.Handler]: it decodes the envelope, serves the
// call and encodes the response, as aws-lambda-go does for a handler of a
// context and an [invoke.Request], without its reflection and copies.
func (h *toolHandler[In, Out]) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return serveEnvelope(ctx, payload, func(invoke.Request) (toolServer, error) { return h, nil })
}

// serveEnvelope decodes an envelope, serves it with the tool handler that
// pick returns for it, and encodes the response.
func serveEnvelope(ctx context.Context, payload []byte, pick func(invoke.Request) (toolServer, error)) ([]byte, error) {
	req, err := invoke.Decode(payload)
	if err != nil {
		return nil, err
	}
	h, err := pick(req)
	if err != nil {
		return nil, err
	}
	resp, err := h.handle(ctx, req)
	if err != nil {
		return nil, err
	}
	out, err := invoke.EncodeResponse(&resp)
	// The result is in out now, and its buffer is for the next call's.
	if recycled := []byte(resp.Result[:0]); cap(recycled) <= maxPooled {
		resultBuffers.Put(&recycled)
	}
	return out, err
}

// resultBuffers hold the buffers of results (*[]byte) from the call whose
// response has been encoded to the next call's toolResponse.
var resultBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooled is the largest buffer kept for reuse: a rare large result does
// not stay held.
const maxPooled = 1 << 20

// OwnsPayloads implements [invoke.PayloadOwner]: Invoke's payload is new.
func (h *toolHandler[In, Out]) OwnsPayloads() {}

// InvokeStream implements [invoke.StreamHandler] (see [Streamed]).
func (h *toolHandler[In, Out]) InvokeStream(ctx context.Context, payload []byte) (io.Reader, error) {
	return Streamed(h).InvokeStream(ctx, payload)
}

var _ invoke.PayloadOwner = (*toolHandler[struct{}, struct{}])(nil)

// encoded returns resp as a buffer holding its JSON: aws-lambda-go passes a
// buffer's bytes on as they are rather than encoding the value again.
func encoded(resp invoke.Response) (io.Reader, error) {
	b, err := invoke.EncodeResponse(&resp)
	if err != nil {
		return nil, err
	}
	return bytes.NewBuffer(b), nil
}

type toolHandler[In, Out any] struct {
	tool    *catalog.Tool
	input   func() (*validator, error) // resolved on first use, by a call that needs it
	check   func() *argsCheck          // compiled on first use; nil for a schema it does not follow
	flat    *flatArgs                  // nil for an input that is not a struct of plain fields
	fn      Func[In, Out]
	table   store.Table
	audit   *audit.Log
	log     *slog.Logger
	metrics *metrics.Emitter
}

func (h *toolHandler[In, Out]) handle(ctx context.Context, req invoke.Request) (invoke.Response, error) {
	start := time.Now()
	if req.Method != invoke.MethodCallTool || req.Tool != h.tool.Name {
		return invoke.Response{}, fmt.Errorf("this function serves %s, not %s %s", h.tool.Name, req.Method, req.Tool)
	}
	if err := tenant.Validate(req.Caller.Tenant); err != nil {
		return invoke.Response{}, fmt.Errorf("envelope has no valid caller: %w", err)
	}
	if req.Thread != "" && !tenant.IsKeyID(req.Thread) {
		return invoke.Response{}, fmt.Errorf("envelope names no valid thread: %.80q", req.Thread)
	}
	var held profile.Profile
	if req.Profile != nil {
		if err := req.Profile.Validate(); err != nil {
			return invoke.Response{}, fmt.Errorf("envelope carries no valid profile: %w", err)
		}
		held = *req.Profile
	}
	if h.tool.TraceArgument {
		req.TraceID = traceArgument(req.Arguments, req.TraceID)
	}
	ctx, notes := withNotifications(ctx, sinkOf(ctx, req))
	ctx = callcontext.NewContext(ctx, callcontext.Call{Caller: req.Caller, TraceID: req.TraceID, RequestID: req.RequestID, Thread: req.Thread, Profile: held, XRay: callcontext.LambdaTraceHeader(ctx)})
	ctx = elicit.NewContext(ctx, req.Input)
	out, err := h.call(ctx, req)
	resp, outcome, err := h.respond(out, err, req)
	resp.Notifications = notes.drain()
	auditFailed := false
	if h.tool.Mutates {
		if aerr := h.audit.Append(ctx, audit.Event{
			Tenant: req.Caller.Tenant, TraceID: req.TraceID, Type: audit.ToolCalled, Tool: h.tool.Name,
			Principal: req.Caller.Principal, RequestID: req.RequestID, Outcome: outcome,
		}); aerr != nil {
			// The call's effect stands; losing its audit record is an operational
			// failure to alarm on (AuditFailures), not a reason to fail the call.
			h.log.ErrorContext(ctx, "audit append failed", "trace_id", req.TraceID, "error", aerr)
			auditFailed = true
		}
	}
	d := time.Since(start)
	h.logCall(ctx, req, outcome, err, d)
	if h.metrics != nil {
		c, _ := callcontext.FromContext(ctx)
		h.metrics.Call(metrics.Call{Family: h.tool.Family, Function: h.tool.Name, Latency: d, Kind: metrics.KindOf(err), AuditFailed: auditFailed,
			Tenant: req.Caller.Tenant, TraceID: req.TraceID, RequestID: req.RequestID, XRayTraceID: callcontext.XRayTraceID(c.XRay)})
	}
	return resp, nil
}

func (h *toolHandler[In, Out]) call(ctx context.Context, req invoke.Request) (Out, error) {
	var in In
	args := req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if c := h.check(); c == nil || !c.certainlyValid(args) {
		var generic any
		if err := json.Unmarshal(args, &generic); err != nil {
			return *new(Out), fault.Invalid("arguments", "are not valid JSON: %v", err)
		}
		input, err := h.input()
		if err != nil {
			return *new(Out), err
		}
		if err := input.resolved.Validate(generic); err != nil {
			return *new(Out), schemaFault(err, input.schema)
		}
	}
	if h.flat == nil || !h.flat.decode(args, reflect.ValueOf(&in).Elem()) {
		in = *new(In) // what flat decoded of it
		if err := json.Unmarshal(args, &in); err != nil {
			return *new(Out), fault.Invalid("arguments", "do not fit the input schema: %v", err)
		}
	}
	if err := spendOnce(ctx, h.table, req); err != nil {
		return *new(Out), err
	}
	return h.fn(ctx, req.Caller, in)
}

// schemaFault turns a jsonschema-go validation error into an invalid-argument
// fault that names the field at fault (old_messages[].role for a nested one)
// and states the rule it broke, in words taken from the schema.
func schemaFault(err error, schema *jsonschema.Schema) error {
	msg := err.Error()
	// The innermost "validating <path>: " prefix locates the failure.
	rest := msg
	if i := strings.LastIndex(msg, "validating "); i >= 0 {
		rest = msg[i+len("validating "):]
	}
	path, detail, _ := strings.Cut(rest, ": ")
	keyword, _, _ := strings.Cut(detail, ":")
	field, node := locate(schema, path)
	join := func(name string) string {
		if field == "" {
			return name
		}
		return field + "." + name
	}
	switch {
	case keyword == "required":
		names := quoted.FindAllStringSubmatch(detail, -1)
		if len(names) > 0 {
			return fault.Invalid(join(names[0][1]), "is required")
		}
	case strings.HasPrefix(detail, "unexpected additional properties"):
		names := quoted.FindAllStringSubmatch(detail, -1)
		if len(names) > 0 {
			return fault.Invalid(join(names[0][1]), "is not a known argument; the input schema lists the arguments")
		}
	case node != nil:
		if m := describe(keyword, node); m != "" {
			return fault.Invalid(fieldOr(field), "%s", m)
		}
	}
	return fault.Invalid(fieldOr(field), "%s", detail)
}

var quoted = regexp.MustCompile(`"([^"]+)"`)

func fieldOr(f string) string {
	if f == "" {
		return "arguments"
	}
	return f
}

// locate walks schema along a jsonschema-go error path such as
// /properties/old_messages/items/properties/role, returning the field's
// dotted name and its schema.
func locate(schema *jsonschema.Schema, path string) (string, *jsonschema.Schema) {
	var names []string
	node := schema
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := 0; i < len(parts) && node != nil; i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				i++
				names = append(names, parts[i])
				node = node.Properties[parts[i]]
			}
		case "items":
			if len(names) > 0 {
				names[len(names)-1] += "[]"
			}
			node = node.Items
		}
	}
	return strings.Join(names, "."), node
}

// describe states the rule of keyword in node as a sentence fragment.
func describe(keyword string, s *jsonschema.Schema) string {
	switch keyword {
	case "enum":
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprint(v)
		}
		return "must be one of: " + strings.Join(vals, ", ")
	case "type":
		return "must be of type " + s.Type
	case "pattern":
		return "must match " + s.Pattern
	case "minLength":
		if s.MinLength != nil && *s.MinLength == 1 {
			return "must not be empty"
		}
		if s.MinLength != nil {
			return fmt.Sprintf("must be at least %d characters", *s.MinLength)
		}
	case "maxLength":
		if s.MaxLength != nil {
			return fmt.Sprintf("must be at most %d characters", *s.MaxLength)
		}
	case "minimum":
		if s.Minimum != nil {
			return fmt.Sprintf("must be at least %g", *s.Minimum)
		}
	case "maximum":
		if s.Maximum != nil {
			return fmt.Sprintf("must be at most %g", *s.Maximum)
		}
	case "maxItems":
		if s.MaxItems != nil {
			return fmt.Sprintf("must have at most %d items", *s.MaxItems)
		}
	}
	return ""
}

// toolResponse builds the MCP result for a call: structured content plus its
// JSON text on success, a tool error with a message the model can act on
// otherwise. The result's shape is fixed, so it is written directly: the
// structured content is encoded once and embedded twice.
func toolResponse(out any, err error, traceID string) invoke.Response {
	var resp invoke.Response
	buf := bytes.NewBuffer((*resultBuffers.Get().(*[]byte))[:0])
	buf.WriteString(`{"_meta":{`)
	writeString(buf, invoke.TraceMetaKey)
	buf.WriteByte(':')
	writeString(buf, traceID)
	buf.WriteString(`},"content":[{"type":"text","text":`)
	if err != nil {
		kind, field, message := fault.Public(err)
		writeString(buf, message)
		buf.WriteString(`}],"isError":true}`)
		resp.Error = &invoke.Error{Kind: string(kind), Field: field, Message: message}
	} else if res, ok := out.(*mcp.CallToolResult); ok && res != nil {
		return passThrough(res, traceID)
	} else {
		scratch := scratchBuffers.Get().(*bytes.Buffer)
		scratch.Reset()
		defer func() {
			if scratch.Cap() <= maxPooled {
				scratchBuffers.Put(scratch)
			}
		}()
		if merr := invoke.MarshalTo(scratch, out); merr != nil {
			return toolResponse(nil, fmt.Errorf("encoding result: %w", merr), traceID)
		}
		structured := scratch.Bytes() // written twice below, and not kept
		if c, ok := out.(Contenter); ok {
			return contentResponse(c.MCPContent(), structured, traceID)
		}
		// The text, quoted (one escape per quote and backslash, but for rare
		// control characters), and the structured content.
		buf.Grow(2*len(structured) + bytes.Count(structured, []byte(`"`)) + bytes.Count(structured, []byte(`\`)) + 32)
		buf.Write(rawjson.AppendString(buf.AvailableBuffer(), structured))
		buf.WriteString(`}],"structuredContent":`)
		buf.Write(structured)
		buf.WriteByte('}')
	}
	resp.Result = buf.Bytes()
	return resp
}

// scratchBuffers hold a result's structured content while toolResponse writes it.
var scratchBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Contenter is implemented by tool outputs that show themselves to the model
// as MCP content other than their JSON text: images, audio, embedded
// resources. The output still travels as the structured content too.
type Contenter interface {
	MCPContent() []mcp.Content
}

func contentResponse(content []mcp.Content, structured []byte, traceID string) invoke.Response {
	res := &mcp.CallToolResult{Meta: mcp.Meta{invoke.TraceMetaKey: traceID}, Content: content, StructuredContent: json.RawMessage(structured)}
	b, err := res.MarshalJSON()
	if err != nil {
		return toolResponse(nil, fmt.Errorf("encoding content: %w", err), traceID)
	}
	return invoke.Response{Result: b}
}

// passThrough answers a tool whose output is an MCP result itself (a
// proxied call's, as its upstream gave it: content, structured content,
// isError), with the call's trace added to its _meta.
func passThrough(res *mcp.CallToolResult, traceID string) invoke.Response {
	cp := *res
	cp.Meta = mcp.Meta{}
	for k, v := range res.Meta {
		cp.Meta[k] = v
	}
	cp.Meta[invoke.TraceMetaKey] = traceID
	if cp.Content == nil {
		cp.Content = []mcp.Content{}
	}
	b, err := cp.MarshalJSON()
	if err != nil {
		return toolResponse(nil, fmt.Errorf("encoding result: %w", err), traceID)
	}
	return invoke.Response{Result: b}
}

// writeString writes s as a JSON string.
func writeString(buf *bytes.Buffer, s string) {
	buf.Write(rawjson.AppendString(buf.AvailableBuffer(), s))
}

func (h *toolHandler[In, Out]) logCall(ctx context.Context, req invoke.Request, outcome string, err error, d time.Duration) {
	level := slog.LevelInfo
	if err != nil && (fault.KindOf(err) == fault.KindInternal || fault.KindOf(err) == fault.KindUnavailable) {
		level = slog.LevelError
	}
	if !h.log.Enabled(ctx, level) {
		return
	}
	attrs := []any{"tenant", req.Caller.Tenant, "principal", req.Caller.Principal, "trace_id", req.TraceID,
		"request_id", req.RequestID, "outcome", outcome, "duration_ms", d.Milliseconds()}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	h.log.Log(ctx, level, "tool call", attrs...)
}

// notifications collects the log and progress messages a call produces,
// or sends each to sink as it is made, for a call answered as a stream.
type notifications struct {
	mu   sync.Mutex
	list []invoke.Notification
	sink func(invoke.Notification)
}

type notificationsKey struct{}

func withNotifications(ctx context.Context, sink func(invoke.Notification)) (context.Context, *notifications) {
	n := &notifications{sink: sink}
	return context.WithValue(ctx, notificationsKey{}, n), n
}

func (n *notifications) add(x invoke.Notification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sink != nil {
		n.sink(x)
		return
	}
	n.list = append(n.list, x)
}

func (n *notifications) drain() []invoke.Notification {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.list
	n.list = nil
	return out
}

// ReportProgress records a progress notification for the client: progress
// out of total (zero if unknown), with an optional message. The gateway relays
// it, tagged with the client's progress token, before the result; as it is
// made when the call is answered as a stream ([Streamed]).
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if n, ok := ctx.Value(notificationsKey{}).(*notifications); ok {
		n.add(invoke.Notification{Progress: &progress, Total: total, Message: message})
	}
}

// Streaming reports whether the call of ctx is answered as a stream
// ([Streamed]): its notifications reach the client as they are made, so a
// call may report finer progress (the chat, its answer as the model writes it).
func Streaming(ctx context.Context) bool {
	n, ok := ctx.Value(notificationsKey{}).(*notifications)
	return ok && n.sink != nil
}

// LogToClient records a log message for the client at an MCP logging level
// ("debug", "info", "warning", ...). The gateway relays it, subject to the
// level the client asked for.
func LogToClient(ctx context.Context, level, logger string, data any) {
	if n, ok := ctx.Value(notificationsKey{}).(*notifications); ok {
		n.add(invoke.Notification{Level: level, Logger: logger, Data: data})
	}
}

// traceArgument returns the trace_id argument in args if it is a valid
// trace id, else trace: the trace a call of a tool with [catalog.Tool]'s
// TraceArgument runs under. An invalid one is left for the tool to refuse,
// naming the field.
func traceArgument(args json.RawMessage, trace string) string {
	var a struct {
		TraceID string `json:"trace_id"`
	}
	if json.Unmarshal(args, &a) == nil && a.TraceID != "" && audit.ValidateTraceID(a.TraceID) == nil {
		return a.TraceID
	}
	return trace
}
