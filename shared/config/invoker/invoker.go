// Package invoker opens the invoker of the stack's functions a
// [config.Config] names (its FunctionPrefix), through the Lambda Invoke API
// (package invoke/lambdaapi): what the deployed gateway and a function that
// invokes others use.
//
//	inv, err := invoker.Open(ctx, &cfg) // nil if cfg names no prefix
package invoker

import (
	"context"

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
	return lambdaapi.New(cfg, c.FunctionPrefix), nil
}
