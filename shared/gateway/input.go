package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
)

// asks reports whether a client on protocol version can be asked for input
// in the middle of a call: in results, from protocol 2026-07-28 on. Earlier
// protocols ask with a server-to-client request, which a stateless server
// cannot wait for the answer to.
func asks(version string) bool { return version >= elicit.ProtocolVersion }

// protocolOf returns the protocol version and client capabilities of the
// session of a request: on 2026-07-28 and later, this request's own (the
// go-sdk decodes its _meta into the session it makes for it); before, the
// initialize handshake's.
func protocolOf(ss *mcp.ServerSession) (string, *mcp.ClientCapabilities) {
	if ip := ss.InitializeParams(); ip != nil {
		return ip.ProtocolVersion, ip.Capabilities
	}
	return "", nil
}

// openRound returns the round of a call bound to b from a client on protocol
// version with caps that can be asked for input, or nil for one that cannot:
// what it can answer, its answers, and the request state it sent back,
// opened. A state that is altered, foreign or expired is refused with an
// invalid-params error saying which and what to do.
func (g *Gateway) openRound(version string, caps *mcp.ClientCapabilities, answers mcp.InputResponseMap, token string, b elicit.Binding) (*elicit.Round, error) {
	if !asks(version) {
		return nil, nil
	}
	r := &elicit.Round{Can: elicit.Answerable(caps), Responses: answers}
	if token != "" {
		s, err := g.states.Open(token, b, time.Now())
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		r.State = &s
	}
	return r, nil
}

// sealAsk checks that the client can answer what ask asks and returns ask's
// request state, sealed and bound to b. A request the client's capabilities
// do not cover is refused with MissingRequiredClientCapabilityError
// (-32021), naming the capabilities; a malformed ask is the tool's bug.
func (g *Gateway) sealAsk(b elicit.Binding, r *elicit.Round, ask *elicit.InputRequired) (string, error) {
	if err := ask.Validate(); err != nil {
		return "", fmt.Errorf("%s %s: %w", b.Method, b.Name, err)
	}
	if missing := ask.Missing(r.Can); len(missing) > 0 {
		return "", missingCapabilities(b.Name, missing)
	}
	return g.states.Seal(b, ask.StateAt(time.Now()))
}

// capabilityOf is the client capability, as ClientCapabilities names it in
// JSON, that answering input requests of each method needs.
var capabilityOf = map[string]any{
	elicit.MethodElicit: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	elicit.MethodSample: map[string]any{"sampling": map[string]any{}},
	elicit.MethodRoots:  map[string]any{"roots": map[string]any{}},
}

// missingCapabilities is the MissingRequiredClientCapabilityError of a call
// to name that needs the client to answer input requests of methods.
func missingCapabilities(name string, methods []string) error {
	required := map[string]any{}
	for _, m := range methods {
		for k, v := range capabilityOf[m].(map[string]any) {
			required[k] = v
		}
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": required})
	return &jsonrpc.Error{
		Code: mcp.CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("%s needs to ask the client for input (%s), and this request's client capabilities do not declare it",
			name, strings.Join(methods, ", ")),
		Data: data,
	}
}

// errOnceInPrompt refuses a prompt that asks for a single-use request state:
// spending one takes a table write, which functions make and the gateway,
// which renders prompts, does not.
var errOnceInPrompt = errors.New("a prompt cannot ask with a single-use request state; only tools can")
