package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
)

// getPrompt returns the MCP handler of prompt p. The gateway renders prompts
// itself, from the catalog; a prompt may ask the client for input as a tool
// does (package elicit), with a request state bound to the prompt and its
// arguments.
func (g *Gateway) getPrompt(p *catalog.Prompt) mcp.PromptHandler {
	if p.Tool != "" {
		return g.renderPrompt(p)
	}
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		caller, err := g.caller(req.Extra)
		if err != nil {
			return nil, err
		}
		args, _ := json.Marshal(req.Params.Arguments) // a map of strings always encodes
		b := elicit.Binding{Caller: caller, Method: "prompts/get", Name: p.Name, Arguments: args}
		version, caps := protocolOf(req.Session)
		round, err := g.openRound(version, caps, req.Params.InputResponses, req.Params.RequestState, b)
		if err != nil {
			return nil, err
		}
		res, err := p.Render(elicit.NewContext(ctx, round), req.Params.Arguments)
		var ask *elicit.InputRequired
		switch {
		case !errors.As(err, &ask):
			return res, err
		case round == nil:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ask.Unsupported("prompt "+p.Name, version)}
		case ask.Once:
			return nil, errOnceInPrompt
		}
		state, err := g.sealAsk(b, round, ask)
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{InputRequests: ask.Requests, RequestState: state}, nil
	}
}

// renderPrompt returns the handler of a prompt its catalog tool renders for
// the caller (package prompt's, with the tenant's overrides in force).
func (g *Gateway) renderPrompt(p *catalog.Prompt) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args, _ := json.Marshal(struct { // strings always encode
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments,omitempty"`
		}{p.Name, req.Params.Arguments})
		raw, err := g.callProxy(ctx, req.Extra, p.Tool, args, nil)
		if err != nil {
			return nil, err
		}
		var res mcp.GetPromptResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("undecodable prompt: %w", err)
		}
		return &res, nil
	}
}
