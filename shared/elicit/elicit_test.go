package elicit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
)

func TestAnswerableReadsTheClientsCapabilities(t *testing.T) {
	tests := []struct {
		name string
		caps *mcp.ClientCapabilities
		want []string
	}{
		{"no capabilities", nil, nil},
		{"elicitation without a mode means form", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, []string{elicit.MethodElicit}},
		{"url elicitation alone cannot answer a form", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}, nil},
		//lint:ignore SA1019 sampling and roots (deprecated by SEP-2577) remain input requests clients may answer during their deprecation window
		{"sampling and roots", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, RootsV2: &mcp.RootCapabilities{}}, []string{elicit.MethodSample, elicit.MethodRoots}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, elicit.Answerable(tt.caps)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfirmedCountsAnAnswerOnlyWithTheStateOfTheQuestion(t *testing.T) {
	accept := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	unticked := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}}
	decline := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "decline"}}
	state := &elicit.State{ID: "s"}
	tests := []struct {
		name              string
		round             *elicit.Round
		yes, wantAnswered bool
	}{
		{"no round", nil, false, false},
		{"no answer", &elicit.Round{State: state}, false, false},
		{"an answer without a state", &elicit.Round{Responses: accept}, false, false},
		{"an accepted, ticked answer", &elicit.Round{Responses: accept, State: state}, true, true},
		{"an accepted answer left unticked", &elicit.Round{Responses: unticked, State: state}, false, true},
		{"a declined answer", &elicit.Round{Responses: decline, State: state}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yes, answered := tt.round.Confirmed("confirm")
			if yes != tt.yes || answered != tt.wantAnswered {
				t.Errorf("Confirmed = %v, %v; want %v, %v", yes, answered, tt.yes, tt.wantAnswered)
			}
		})
	}
}

func TestFromContextIsNilForCallersThatCannotBeAsked(t *testing.T) {
	if r := elicit.FromContext(context.Background()); r != nil || r.Supports(elicit.MethodElicit) {
		t.Errorf("FromContext = %v, want nil, which supports nothing", r)
	}
}

func TestInputRequired(t *testing.T) {
	ask := &elicit.InputRequired{Requests: mcp.InputRequestMap{
		"name": elicit.Form("What is your name?", map[string]any{"type": "object"}),
		//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
		"roots": &mcp.ListRootsParams{},
	}}
	if err := ask.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if diff := cmp.Diff([]string{elicit.MethodElicit}, ask.Missing([]string{elicit.MethodRoots})); diff != "" {
		t.Errorf("Missing mismatch (-want +got):\n%s", diff)
	}
	msg := ask.Unsupported("report_delete", "2025-11-25")
	for _, want := range []string{"report_delete", "What is your name?", "2025-11-25", elicit.ProtocolVersion} {
		if !strings.Contains(msg, want) {
			t.Errorf("Unsupported() = %q, want it to name %q", msg, want)
		}
	}
	for name, bad := range map[string]*elicit.InputRequired{
		"no requests": {},
		//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
		"an empty id":    elicit.Ask("", &mcp.ListRootsParams{}),
		"too much state": {Requests: ask.Requests, State: make([]byte, elicit.MaxStateBytes+1)},
		"a negative TTL": {Requests: ask.Requests, TTL: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate of %s succeeded", name)
		}
	}
}
