// Package invoker opens the invoker of the stack's functions a
// [config.Config] names (its FunctionPrefix), through the Lambda Invoke API:
// what the deployed gateway and a function that invokes others use. It is a
// package of its own so that only they link the Lambda client.
//
//	inv, err := invoker.Open(ctx, &cfg) // nil if cfg names no prefix
package invoker

import (
	"context"

	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
)

// Open returns the invoker of the functions c.FunctionPrefix names, or nil
// if it names none.
func Open(ctx context.Context, c *config.Config) (invoke.Invoker, error) {
	if c.FunctionPrefix == "" {
		return nil, nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return lambdaapi.New(awslambda.NewFromConfig(cfg), c.FunctionPrefix), nil
}
