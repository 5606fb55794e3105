// Package invoke carries a call from the gateway to the function that serves
// it. [Request] is the envelope that crosses the boundary and [Response] is
// what comes back; an [Invoker] delivers it, in-process on a laptop ([Local])
// or through the Lambda Invoke API on AWS (package invoke/lambdaapi). Both hand
// the function the same bytes.
//
//	resp, err := inv.Invoke(ctx, "memory/add_message", &invoke.Request{
//		Method:    invoke.MethodCallTool,
//		Tool:      "memory_add_message",
//		Arguments: json.RawMessage(`{"conversation_id":"chat_1","role":"user","content":"hi"}`),
//		Caller:    tenant.Caller{Tenant: "acme", Principal: "alice"},
//	})
//	var fe *invoke.FunctionError
//	if errors.As(err, &fe) { /* the function crashed or timed out */ }
package invoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The methods a [Request] can carry.
const (
	MethodCallTool      = "tools/call"
	MethodReadResource  = "resources/read"
	MethodListResources = "resources/list"
)

// TraceMetaKey is the _meta key under which every tool result carries its
// trace id: the functions set it, and the gateway sets it on the tool
// errors it makes itself.
const TraceMetaKey = "switchboard.dev/trace_id"

// Request is the envelope a function receives.
type Request struct {
	Method string `json:"method"`
	// Tool and Arguments are set for tools/call.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// URI is set for resources/read; Cursor may be set for resources/list.
	URI    string `json:"uri,omitempty"`
	Cursor string `json:"cursor,omitempty"`

	// Caller is who the request acts for. The gateway sets it from the
	// authenticated principal; it never comes from tool arguments.
	Caller          tenant.Caller `json:"caller"`
	RequestID       string        `json:"request_id"`
	TraceID         string        `json:"trace_id"`
	ProtocolVersion string        `json:"protocol_version,omitempty"`
	// Input is set for a tools/call from a client that can be asked for
	// input in the middle of a call (protocol 2026-07-28 and later): what it
	// can answer, and its answers and verified request state when it comes
	// back with them. The tool reads it with elicit.FromContext.
	Input *elicit.Round `json:"input,omitempty"`
	// Stream asks the function for a streamed answer (see [ReadStream]):
	// each notification written as it is made, the response last. A
	// [StreamInvoker] sets it.
	Stream bool `json:"stream,omitempty"`
	// Thread is the thread a tools/call names in
	// _meta["switchboard.dev/thread_id"], which the gateway has checked is
	// a thread id; "" for none. An optimizer_* tool reads its settings when
	// its arguments name no thread (settings.Thread).
	Thread string `json:"thread,omitempty"`
	// Profile is the tool profile the caller is held to (its key's or
	// token's, narrowed to the thread the request names), set for a
	// function that calls tools on the caller's behalf (a catalog entry
	// with Invokes: the chat), which offers and calls only the tools it
	// allows; nil for a caller held to none.
	Profile *profile.Profile `json:"profile,omitempty"`
}

// Response is what a function answers.
type Response struct {
	// Result is the MCP result for the request's method: a CallToolResult, a
	// ReadResourceResult or a ListResourcesResult.
	Result json.RawMessage `json:"result"`
	// Error classifies a failed call (Result then holds a tool error for
	// tools/call), so that other front ends, such as the compatibility
	// JSON-RPC endpoint, can report it in their own terms.
	Error *Error `json:"error,omitempty"`
	// Notifications are the log and progress messages the function produced,
	// in order; the gateway relays them to the client before the result.
	Notifications []Notification `json:"notifications,omitempty"`
	// InputRequired is set when the tool asked the client for input: the
	// gateway seals its state and answers an InputRequiredResult. Result then
	// holds the tool error for front ends that cannot ask (the compatibility
	// endpoint, clients before protocol 2026-07-28).
	InputRequired *elicit.InputRequired `json:"input_required,omitempty"`
}

// Error is a classified failure inside a [Response].
type Error struct {
	Kind    string `json:"kind"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Notification is a log or progress message a function produced.
type Notification struct {
	// Log message: Level is an MCP logging level ("info", "warning", ...).
	Level  string `json:"level,omitempty"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data,omitempty"`
	// Progress report: set when Progress is not nil.
	Progress *float64 `json:"progress,omitempty"`
	Total    float64  `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// An Invoker delivers a request to the named function (its path under
// functions/, such as "memory/add_message") and returns its response. A
// function that fails outright (crashes, times out, returns a Lambda error)
// yields a [*FunctionError]; a function that reports a failed call returns a
// Response whose Error is set. Implementations are safe for concurrent use.
type Invoker interface {
	Invoke(ctx context.Context, function string, req *Request) (*Response, error)
}

// RawInvoker is an [Invoker] that can also return a function's response
// payload as the function wrote it, for a caller that reads it in a pass of
// its own rather than after [DecodeResponse] has (the gateway's tools/call
// fast path). [Local] is one.
type RawInvoker interface {
	Invoker
	InvokeRaw(ctx context.Context, function string, req *Request) ([]byte, error)
}

// FunctionError reports a function that failed outright rather than answering.
type FunctionError struct {
	Function string
	Type     string // Lambda's errorType, such as "Runtime.ExitError"
	Message  string
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("function %s failed (%s): %s", e.Function, e.Type, e.Message)
}

// Marshal is json.Marshal without HTML escaping: what crosses the boundary
// keeps "<", ">" and "&" as they are, rather than as "\u003c" and its kin.
func Marshal(v any) ([]byte, error) {
	buf := marshalBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 { // a rare large value does not stay held
			marshalBuffers.Put(buf)
		}
	}()
	if err := MarshalTo(buf, v); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// MarshalTo appends the JSON of v to buf, as [Marshal] returns it.
func MarshalTo(buf *bytes.Buffer, v any) error {
	if a, ok := v.(Appender); ok {
		b, err := a.AppendJSON(buf.AvailableBuffer())
		if err != nil {
			return err
		}
		buf.Write(b)
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// Appender is implemented by a value that appends its own JSON to b,
// exactly as [MarshalTo] writes it by reflection, only faster: for the
// outputs of the hottest tools.
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// marshalBuffers spare Marshal growing a buffer for every value.
var marshalBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// EncodeResponse returns the JSON payload of resp. It writes Result as it is,
// without the validate-and-compact pass encoding/json gives a RawMessage:
// functions produce it themselves, and it can be large.
func EncodeResponse(resp *Response) ([]byte, error) {
	buf := bytes.NewBuffer(reusedPayload(len(resp.Result) + 64))
	buf.WriteString(`{"result":`)
	if len(resp.Result) == 0 {
		buf.WriteString("null")
	} else {
		buf.Write(resp.Result)
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if resp.Error != nil {
		buf.WriteString(`,"error":`)
		if err := enc.Encode(resp.Error); err != nil {
			return nil, fmt.Errorf("invoke: encoding response error: %w", err)
		}
	}
	if len(resp.Notifications) > 0 {
		buf.WriteString(`,"notifications":`)
		if err := enc.Encode(resp.Notifications); err != nil {
			return nil, fmt.Errorf("invoke: encoding notifications: %w", err)
		}
	}
	if resp.InputRequired != nil {
		buf.WriteString(`,"input_required":`)
		if err := enc.Encode(resp.InputRequired); err != nil {
			return nil, fmt.Errorf("invoke: encoding input requests: %w", err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
