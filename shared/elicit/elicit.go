// Package elicit lets a tool ask its caller for input in the middle of a call
// and carry on where it left off, with nothing kept on the server between the
// two requests: MCP's multi round-trip requests (SEP-2322, protocol version
// 2026-07-28 and later).
//
// A tool that needs an answer returns an [*InputRequired] as its error: the
// input requests (most often a form, [Form] or [Confirm]) and, optionally,
// state of its own. The client receives an InputRequiredResult whose
// requestState is that state sealed by a [Keyring] (AES-256-GCM) and bound to
// the caller (tenant and principal), the tool, a digest of its arguments and
// an expiry. The client calls the tool again with the same arguments, its
// answers and the requestState; the gateway opens the state ([Keyring.Open]),
// refusing one altered, issued for another call or expired, and a state the
// tool marked [InputRequired.Once] is spent ([Spend]) with a conditional
// write, so a second use is refused. The tool finds the answers and its
// state in the call's [Round]:
//
//	func (s *Service) Delete(ctx context.Context, c tenant.Caller, in DeleteInput) (StatusOutput, error) {
//		if round := elicit.FromContext(ctx); !in.Confirm && round.Supports(elicit.MethodElicit) {
//			yes, answered := round.Confirmed("confirm")
//			if !answered {
//				ask := elicit.Ask("confirm", elicit.Confirm("Delete conversation chat_1 and its 12 messages?"))
//				ask.Once = true
//				return StatusOutput{}, ask
//			}
//			if !yes {
//				return StatusOutput{}, fault.Invalid("confirm", "the deletion was not confirmed; nothing was deleted")
//			}
//		}
//		// delete
//	}
//
// Clients on a protocol before 2026-07-28 cannot be asked: [FromContext]
// returns nil for their calls, and an InputRequired returned anyway ends the
// call with a tool error saying which protocol version carries the question
// ([InputRequired.Unsupported]). A stateless server cannot send the older
// protocols' server-to-client request and wait for its answer.
package elicit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is the first MCP protocol version that carries input
// requests in results (multi round-trip requests).
const ProtocolVersion = "2026-07-28"

// The methods of the input requests a tool can make, as the client's
// capabilities name them: elicitation (form), sampling and roots.
const (
	MethodElicit = "elicitation/create"
	MethodSample = "sampling/createMessage"
	MethodRoots  = "roots/list"
)

// Limits on what a tool may ask in one round.
const (
	// MaxRequests bounds the input requests of one [InputRequired].
	MaxRequests = 16
	// MaxStateBytes bounds [InputRequired.State].
	MaxStateBytes = 4096
	// DefaultTTL is how long a request state stays valid when
	// [InputRequired.TTL] is zero: long enough for a person to answer a form.
	DefaultTTL = 10 * time.Minute
	// MaxTTL bounds [InputRequired.TTL].
	MaxTTL = 24 * time.Hour
)

// Round is what a call carries of a multi round-trip exchange: which input
// requests the client can answer, its answers to the previous round's
// requests, and the state sealed in that round, opened and verified.
type Round struct {
	// Can lists the methods of the input requests the client declared it
	// can answer ([MethodElicit], [MethodSample], [MethodRoots]).
	Can []string `json:"can,omitempty"`
	// Responses are the client's answers, by the ids of the requests.
	Responses mcp.InputResponseMap `json:"responses,omitempty"`
	// State is the state the previous round sealed, verified to belong to
	// this caller, tool and arguments and not expired (and, if it is to be
	// used once, spent); nil if the call carried none.
	State *State `json:"state,omitempty"`
}

// Answerable returns the methods of the input requests a client with caps
// can answer, for [Round.Can]. A form elicitation needs the elicitation
// capability with form (or, as before 2025-11-25, with no mode at all).
func Answerable(caps *mcp.ClientCapabilities) []string {
	if caps == nil {
		return nil
	}
	var can []string
	if e := caps.Elicitation; e != nil && (e.Form != nil || e.URL == nil) {
		can = append(can, MethodElicit)
	}
	//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
	if caps.Sampling != nil {
		can = append(can, MethodSample)
	}
	//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
	if caps.RootsV2 != nil {
		can = append(can, MethodRoots)
	}
	return can
}

// Supports reports whether the client can answer input requests of method.
// It is false on a nil Round, which is what callers on protocols before
// 2026-07-28 get.
func (r *Round) Supports(method string) bool {
	return r != nil && slices.Contains(r.Can, method)
}

// Response returns the client's answer to the input request with id: an
// *mcp.ElicitResult, *mcp.CreateMessageWithToolsResult or *mcp.ListRootsResult.
func (r *Round) Response(id string) (mcp.InputResponse, bool) {
	if r == nil {
		return nil, false
	}
	res, ok := r.Responses[id]
	return res, ok
}

// Elicited returns the client's answer to the elicitation with id.
func (r *Round) Elicited(id string) (*mcp.ElicitResult, bool) {
	res, _ := r.Response(id)
	e, ok := res.(*mcp.ElicitResult)
	return e, ok
}

// Confirmed reports the answer to the [Confirm] question with id: answered
// is true when the call carries an answer together with a request state, so
// that the answer is known to respond to a question this server asked for
// this very call (same caller, tool and arguments); yes when the person
// accepted and ticked the box.
func (r *Round) Confirmed(id string) (yes, answered bool) {
	res, ok := r.Elicited(id)
	if !ok || r.State == nil {
		return false, false
	}
	return res.Action == "accept" && res.Content[confirmField] == true, true
}

type roundKey struct{}

// NewContext returns ctx carrying r, the call's round.
func NewContext(ctx context.Context, r *Round) context.Context {
	return context.WithValue(ctx, roundKey{}, r)
}

// FromContext returns the round of the call ctx serves, or nil when the
// caller cannot be asked for input (its protocol predates 2026-07-28).
func FromContext(ctx context.Context) *Round {
	r, _ := ctx.Value(roundKey{}).(*Round)
	return r
}

// InputRequired ends a call by asking the client for input. A tool returns
// it as its error; the client answers and calls again.
type InputRequired struct {
	// Requests are the input requests, by ids of the tool's choosing.
	Requests mcp.InputRequestMap `json:"requests"`
	// State is what the next round needs to carry on; it comes back,
	// verified, as [Round.State].Data. It may be empty: a request state is
	// issued anyway, binding the answers to this call.
	State []byte `json:"state,omitempty"`
	// Once makes the request state usable once: a second call with it is
	// refused. Approvals and confirmations want this.
	Once bool `json:"once,omitempty"`
	// TTL is how long the request state stays valid. If zero, defaults to
	// [DefaultTTL].
	TTL time.Duration `json:"ttl,omitempty"`
}

// Ask returns an [InputRequired] with one request.
func Ask(id string, req mcp.InputRequest) *InputRequired {
	return &InputRequired{Requests: mcp.InputRequestMap{id: req}}
}

// Error implements the error interface: what is asked, in words.
func (e *InputRequired) Error() string {
	return "the call needs input: " + e.describe()
}

// describe lists the requests' messages (elicitations) or methods.
func (e *InputRequired) describe() string {
	var parts []string
	for _, id := range sortedKeys(e.Requests) {
		switch p := e.Requests[id].(type) {
		case *mcp.ElicitParams:
			parts = append(parts, fmt.Sprintf("%q", p.Message))
		//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			parts = append(parts, "a completion from the client's model ("+MethodSample+")")
		//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
		case *mcp.ListRootsParams:
			parts = append(parts, "the client's roots ("+MethodRoots+")")
		}
	}
	return strings.Join(parts, "; ")
}

// Unsupported returns the tool error of a call that asked a client on
// protocol version (empty if unknown) for input it cannot be asked for.
func (e *InputRequired) Unsupported(tool, version string) string {
	speaks := "an older protocol version"
	if version != "" {
		speaks = "protocol version " + version
	}
	return fmt.Sprintf("%s needs an answer from you before it can go on: %s. Your client speaks %s, and this server "+
		"asks questions in the middle of a call only with MCP %s or later (multi round-trip requests): it is stateless, "+
		"so it cannot send a request to your client and wait for the reply. Use a client that supports MCP %s.",
		tool, e.describe(), speaks, ProtocolVersion, ProtocolVersion)
}

// Validate checks e before it is sent: one to [MaxRequests] requests of known
// kinds with non-empty ids, state within [MaxStateBytes], a TTL within [MaxTTL].
func (e *InputRequired) Validate() error {
	if len(e.Requests) == 0 || len(e.Requests) > MaxRequests {
		return fmt.Errorf("elicit: %d input requests; 1 to %d are allowed", len(e.Requests), MaxRequests)
	}
	for id, r := range e.Requests {
		if id == "" {
			return errors.New("elicit: an input request has an empty id")
		}
		if method(r) == "" {
			return fmt.Errorf("elicit: input request %q is of an unknown kind", id)
		}
	}
	if len(e.State) > MaxStateBytes {
		return fmt.Errorf("elicit: state is %d bytes; at most %d are allowed", len(e.State), MaxStateBytes)
	}
	if e.TTL < 0 || e.TTL > MaxTTL {
		return fmt.Errorf("elicit: TTL %v is outside 0 to %v", e.TTL, MaxTTL)
	}
	return nil
}

// Missing returns the methods of e's requests that a client able to answer
// only can cannot answer, each once, in order.
func (e *InputRequired) Missing(can []string) []string {
	var out []string
	for _, id := range sortedKeys(e.Requests) {
		if m := method(e.Requests[id]); !slices.Contains(can, m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// StateAt returns the request state to seal for e, asked at now: its state,
// whether it is to be used once, and its expiry, now plus its TTL.
func (e *InputRequired) StateAt(now time.Time) State {
	ttl := e.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return State{Expires: now.Add(ttl), Once: e.Once, Data: e.State}
}

// method returns the method of an input request, or "" for an unknown kind.
func method(r mcp.InputRequest) string {
	switch r.(type) {
	case *mcp.ElicitParams:
		return MethodElicit
	//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return MethodSample
	//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
	case *mcp.ListRootsParams:
		return MethodRoots
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// confirmField is the one field of a [Confirm] form.
const confirmField = "confirm"

// Form returns a form elicitation: message, and the flat JSON Schema object
// (properties of primitive types only) the answer must fit.
func Form(message string, schema map[string]any) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema}
}

// Confirm returns a form elicitation asking a yes-or-no question: message,
// with one required boolean, which [Round.Confirmed] reads.
func Confirm(message string) *mcp.ElicitParams {
	return Form(message, map[string]any{
		"type": "object",
		"properties": map[string]any{
			confirmField: map[string]any{"type": "boolean", "title": "Yes, go ahead", "default": false},
		},
		"required": []string{confirmField},
	})
}
