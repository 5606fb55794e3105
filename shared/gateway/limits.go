package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// bodyBudget bounds the bytes of request bodies held in memory at once by
// limitTool, which reads a large body whole before the MCP server does:
// past it, further large requests wait for earlier ones to finish.
const bodyBudget = 64 << 20

// The body limit follows the request: a call of a tool that takes large
// arguments (an inline document, a resume) may be as large as the tool's
// limit (catalog.Tool.RequestBytes), anything else Options.MaxBodyBytes. A
// body's size is known before it is read only when it declares its length,
// and which tool it calls only once it is read, so:
//
//   - limitBody, before authentication, refuses a declared length over the
//     largest limit and cuts any body off there;
//   - limitTool, after it, passes a body declared within MaxBodyBytes
//     straight through (cut off at MaxBodyBytes), and reads any other whole,
//     within g.budget, to hold it to the limit of the tool it calls.
//
// Refusals are 413s with a JSON-RPC error that says the limit.

// limitBody refuses bodies over the largest limit of any request.
func (g *Gateway) limitBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > g.maxBody {
			writeTooLarge(w, nil, r.ContentLength, g.maxBody, "")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		h.ServeHTTP(w, r)
	})
}

// limitTool holds a request to the limit of what it calls.
func (g *Gateway) limitTool(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength >= 0 && r.ContentLength <= g.opts.MaxBodyBytes {
			r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes)
			h.ServeHTTP(w, r)
			return
		}
		weight := r.ContentLength
		if weight < 0 {
			weight = g.maxBody
		}
		if err := g.budget.Acquire(r.Context(), weight); err != nil {
			return // the client is gone
		}
		defer g.budget.Release(weight)
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		if id, limit, tool := g.limitOf(body); int64(len(body)) > limit {
			writeTooLarge(w, id, int64(len(body)), limit, tool)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// limitOf returns the body limit of the JSON-RPC message body, with its id
// and the tool it calls, if it calls one with a limit of its own. A batch
// is held to MaxBodyBytes: large calls are sent alone.
func (g *Gateway) limitOf(body []byte) (id json.RawMessage, limit int64, tool string) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || (msg.Method != "tools/call" && msg.Method != toolServer+"/tools/call") {
		return nil, g.opts.MaxBodyBytes, ""
	}
	t, ok := g.opts.Catalog.Tool(msg.Params.Name)
	if !ok || t.Visibility != catalog.Public || t.MaxRequestBytes <= g.opts.MaxBodyBytes {
		return msg.ID, g.opts.MaxBodyBytes, ""
	}
	return msg.ID, t.MaxRequestBytes, t.Name
}

// readBody reads r's body whole, or answers why it cannot: 413 past the
// limit a MaxBytesReader set, 400 when reading fails (a client gone or too
// slow).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeTooLarge(w, nil, -1, tooBig.Limit, "")
		return nil, false
	case err != nil:
		writeJSONRPCError(w, http.StatusBadRequest, -32600, "reading the request body failed: "+err.Error())
		return nil, false
	}
	return body, true
}

// writeTooLarge answers 413 with a JSON-RPC error naming the limit (and the
// tool it is the limit of, if any); size is the body's, or -1 if unknown.
func writeTooLarge(w http.ResponseWriter, id json.RawMessage, size, limit int64, tool string) {
	msg := fmt.Sprintf("request body is %d bytes, more than the %d bytes this server accepts", size, limit)
	if size < 0 {
		msg = fmt.Sprintf("request body is more than the %d bytes this server accepts", limit)
	}
	if tool != "" {
		msg += " for a call of " + tool
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32600, "message": msg, "data": map[string]any{"limit": limit}},
	})
}
