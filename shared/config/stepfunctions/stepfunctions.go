// Package stepfunctions opens the RAG pipeline's runner a [config.Config]
// names: a synchronous execution of the deployed Express state machine
// (SWITCHBOARD_PIPELINE_ARN). It is a package of its own so that only the
// functions that run the pipeline link the runner.
//
//	r, err := stepfunctions.Open(ctx, &cfg) // nil if cfg names no state machine
package stepfunctions

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/pipeline/stepfunctions"
)

// Open returns the Step Functions runner of the state machine c.PipelineARN
// names, or nil if it names none.
func Open(ctx context.Context, c *config.Config) (pipeline.Runner, error) {
	if c.PipelineARN == "" {
		return nil, nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return stepfunctions.New(cfg, c.PipelineARN), nil
}
