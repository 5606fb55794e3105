package config

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/switchboard-dev/switchboard/shared/pipeline"
)

// EnvPipelineARN names the RAG pipeline's Express state machine. The
// template sets it on the functions that run the pipeline; where it is unset
// (a laptop), the local gateway runs the same definition in process
// (pipeline.Local, wired by package launch).
const EnvPipelineARN = "SWITCHBOARD_PIPELINE_ARN"

func (c Config) validatePipeline() error {
	if c.PipelineARN != "" && !strings.HasPrefix(c.PipelineARN, "arn:") {
		return fmt.Errorf("%s: %q is not a state machine ARN (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)", EnvPipelineARN, c.PipelineARN)
	}
	return nil
}

// OpenPipeline returns the Step Functions runner of the state machine
// PipelineARN names, or nil if it names none.
func (c *Config) OpenPipeline(ctx context.Context) (pipeline.Runner, error) {
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
			pipeline.WithoutHostPrefix(o)
		}
	})
	return pipeline.NewStepFunctions(client, c.PipelineARN), nil
}
