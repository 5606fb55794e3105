package invoke

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// LambdaAPI is the part of the Lambda client [Lambda] uses.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Lambda invokes functions through the Lambda Invoke API. Function paths map
// to function names by a fixed rule, see [FunctionName], so the gateway needs
// only the stack's prefix, not one setting per function.
type Lambda struct {
	client LambdaAPI
	prefix string
}

// NewLambda returns an Invoker that calls function prefix+FunctionName(path).
func NewLambda(client LambdaAPI, prefix string) *Lambda {
	return &Lambda{client: client, prefix: prefix}
}

// Invoke implements [Invoker].
func (l *Lambda) Invoke(ctx context.Context, function string, req *Request) (*Response, error) {
	payload, err := Encode(req)
	if err != nil {
		return nil, err
	}
	name := l.prefix + FunctionName(function)
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
		return nil, &FunctionError{Function: function, Type: e.Type, Message: e.Message}
	}
	return DecodeResponse(function, out.Payload)
}
