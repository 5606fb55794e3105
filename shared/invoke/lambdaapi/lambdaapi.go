// Package lambdaapi invokes Switchboard's functions through the Lambda Invoke
// API: the [invoke.Invoker] of the deployed gateway and of a function that
// invokes others (the retriever its search workers).
//
//	inv := lambdaapi.New(lambda.NewFromConfig(awsCfg), "switchboard-")
//	resp, err := inv.Invoke(ctx, "memory/add_message", req) // calls switchboard-memory-add-message
//
// It is a package of its own so that only the binaries that invoke functions
// link the Lambda client (and pay for its initialisation at cold start);
// package invoke, which every function links for its envelope, does not.
package lambdaapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// API is the part of the Lambda client [Invoker] uses.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Invoker invokes functions through the Lambda Invoke API. Function paths
// map to function names by a fixed rule, see [invoke.FunctionName], so the
// gateway needs only the stack's prefix, not one setting per function. It is
// safe for concurrent use.
type Invoker struct {
	client API
	prefix string
}

var _ invoke.Invoker = (*Invoker)(nil)

// New returns an Invoker that calls function prefix+invoke.FunctionName(path).
func New(client API, prefix string) *Invoker {
	return &Invoker{client: client, prefix: prefix}
}

// Invoke implements [invoke.Invoker].
func (l *Invoker) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	payload, err := invoke.Encode(req)
	if err != nil {
		return nil, err
	}
	name := l.prefix + invoke.FunctionName(function)
	out, err := l.client.Invoke(ctx, &lambda.InvokeInput{FunctionName: &name, Payload: payload})
	if err != nil {
		return nil, fmt.Errorf("invoke: lambda %s: %w", name, err)
	}
	if out.FunctionError != nil {
		var e struct {
			Message string `json:"errorMessage"`
			Type    string `json:"errorType"`
		}
		_ = json.Unmarshal(out.Payload, &e) // a crash may leave no JSON; keep what we have
		if e.Type == "" {
			e.Type = *out.FunctionError
		}
		if e.Message == "" {
			e.Message = string(out.Payload)
		}
		return nil, &invoke.FunctionError{Function: function, Type: e.Type, Message: e.Message}
	}
	return invoke.DecodeResponse(function, out.Payload)
}
