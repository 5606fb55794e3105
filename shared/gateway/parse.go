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
)

// MaxBatch bounds the messages of one JSON-RPC batch, which only protocol
// 2025-03-26 (and a request that names no version, taken as 2025-03-26)
// allows: each may be a tool call, so a batch multiplies one request's work.
const MaxBatch = 16

// checkJSON answers an MCP request whose body is not one JSON value with
// 400 and a JSON-RPC parse error (-32700), and a batch of more than
// [MaxBatch] messages, or of none, with 400 and an invalid request error
// (-32600). Later protocol versions refuse batches altogether (the go-sdk
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
		if v := r.Header.Get("Mcp-Protocol-Version"); bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) && (v == "" || v < "2025-06-18") {
			var batch []json.RawMessage
			if err := json.Unmarshal(body, &batch); err == nil && (len(batch) == 0 || len(batch) > MaxBatch) {
				writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("invalid request: a batch holds %d messages; send 1 to %d per request", len(batch), MaxBatch))
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
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
