package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxBatch bounds the messages of one JSON-RPC batch, which only protocol
// 2025-03-26 (and a request that names no version, taken as 2025-03-26)
// allows: each may be a tool call, so a batch multiplies one request's work.
const MaxBatch = 16

// checkJSON answers an MCP request whose body is not one JSON value with
// 400 and a JSON-RPC parse error (-32700); a batch of more than [MaxBatch]
// messages, or of none, or a message whose members have the wrong JSON
// types, with 400 and an invalid request error (-32600); and a request whose
// params have the wrong JSON types with a -32602 error naming the member.
// The go-sdk would refuse the last two too, but in messages that name its Go
// types. Later protocol versions refuse batches altogether (the go-sdk
// does).
func (g *Gateway) checkJSON(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		if err := oneValue(body); err != nil {
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: "+jsonProblem("the request body", err))
			return
		}
		var msgs []json.RawMessage // copies: decoding into body's own bytes would overwrite them
		if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
			msgs = []json.RawMessage{body}
		} else {
			json.Unmarshal(body, &msgs)
			if v := r.Header.Get("Mcp-Protocol-Version"); (v == "" || v < "2025-06-18") && (len(msgs) == 0 || len(msgs) > MaxBatch) {
				writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("invalid request: a batch holds %d messages; send 1 to %d per request", len(msgs), MaxBatch))
				return
			}
		}
		for _, m := range msgs {
			id, code, problem := checkMessage(m)
			switch code {
			case jsonrpc.CodeInvalidRequest:
				writeJSONRPCError(w, http.StatusBadRequest, int(code), problem)
				return
			case jsonrpc.CodeInvalidParams:
				writeRPC(w, id, nil, &rpcError{Code: int(code), Message: problem})
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// paramTypes gives, for the methods whose params the go-sdk decodes, a new
// value of the type it decodes them into.
var paramTypes = map[string]func() any{
	"initialize":               func() any { return new(mcp.InitializeParams) },
	"ping":                     func() any { return new(mcp.PingParams) },
	"tools/list":               func() any { return new(mcp.ListToolsParams) },
	"tools/call":               func() any { return new(mcp.CallToolParamsRaw) },
	"resources/list":           func() any { return new(mcp.ListResourcesParams) },
	"resources/templates/list": func() any { return new(mcp.ListResourceTemplatesParams) },
	"resources/read":           func() any { return new(mcp.ReadResourceParams) },
	"resources/subscribe":      func() any { return new(mcp.SubscribeParams) },
	"resources/unsubscribe":    func() any { return new(mcp.UnsubscribeParams) },
	"prompts/list":             func() any { return new(mcp.ListPromptsParams) },
	"prompts/get":              func() any { return new(mcp.GetPromptParams) },
	"completion/complete":      func() any { return new(mcp.CompleteParams) },
	//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
	"logging/setLevel": func() any { return new(mcp.SetLoggingLevelParams) },
}

// checkMessage checks the JSON types of a JSON-RPC message's members, and
// of its params where paramTypes knows them. It returns the error code
// (zero if none), the message's id and what is wrong.
func checkMessage(raw json.RawMessage) (id json.RawMessage, code int64, problem string) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: " + jsonProblem("a JSON-RPC message", err)
	}
	if len(m.ID) > 0 && !bytes.HasPrefix(m.ID, []byte(`"`)) && !bytes.Equal(m.ID, []byte("null")) && json.Unmarshal(m.ID, new(float64)) != nil {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number"
	}
	newParams, known := paramTypes[m.Method]
	if !known || len(m.Params) == 0 || bytes.Equal(m.Params, []byte("null")) {
		return nil, 0, ""
	}
	var typ *json.UnmarshalTypeError
	if err := json.Unmarshal(m.Params, newParams()); errors.As(err, &typ) {
		return m.ID, jsonrpc.CodeInvalidParams, "invalid params: " + jsonProblem("params", err)
	}
	return nil, 0, ""
}

// errTrailing is the error of a body with more after its JSON value.
type errTrailing struct{ offset int64 }

func (e errTrailing) Error() string {
	return fmt.Sprintf("more follows the JSON value, at byte %d", e.offset)
}

// oneValue checks that body is exactly one JSON value, with nothing but
// white space after it.
func oneValue(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if rest := bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return errTrailing{int64(len(body) - len(rest))}
	}
	return nil
}

// jsonProblem says what is wrong with what, a JSON value a client sent, in
// its terms: where the JSON breaks, or which member has the wrong type,
// never the Go type it was decoded into.
func jsonProblem(what string, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var trail errTrailing
	switch {
	case errors.As(err, &trail):
		return what + ": " + trail.Error()
	case errors.As(err, &syn):
		return fmt.Sprintf("%s is not valid JSON at byte %d: %s", what, syn.Offset, syn.Error())
	case errors.As(err, &typ):
		name := what
		if typ.Field != "" {
			name = typ.Field
		}
		return fmt.Sprintf("%s must be %s, not %s", name, jsonKind(typ.Type), typ.Value)
	case errors.Is(err, io.EOF):
		return what + " is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return what + " ends inside its JSON value"
	}
	return what + " is not valid JSON"
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another JSON kind"
}
