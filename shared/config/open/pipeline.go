package open

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/pipeline/stepfunctions"
)

// Pipeline returns the Step Functions runner of the state machine
// c.PipelineARN names, or nil if it names none.
func Pipeline(ctx context.Context, c *config.Config) (pipeline.Runner, error) {
	if c.PipelineARN == "" {
		return nil, nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	client := sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		// A custom endpoint (AWS_ENDPOINT_URL_SFN: an emulator, a test
		// server) has no sync- host to prefix.
		if o.BaseEndpoint != nil {
			stepfunctions.WithoutHostPrefix(o)
		}
	})
	return stepfunctions.New(client, c.PipelineARN), nil
}
