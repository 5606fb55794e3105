package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/config"
)

func TestFromEnvReadsEveryVariable(t *testing.T) {
	env := map[string]string{
		config.EnvTable: "switchboard-Table-1", config.EnvBucket: "switchboard-bucket", config.EnvFunctionPrefix: "switchboard-",
		config.EnvAllowedOrigins: " https://a.example.com, ,https://b.example.com", config.EnvAnonymousTenant: "demo",
		"AWS_LAMBDA_FUNCTION_NAME": "switchboard-gateway",
	}
	got := config.FromEnv(func(k string) string { return env[k] })
	want := config.Config{Table: "switchboard-Table-1", Bucket: "switchboard-bucket", FunctionPrefix: "switchboard-",
		AllowedOrigins: []string{"https://a.example.com", "https://b.example.com"}, AnonymousTenant: "demo", InLambda: true}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(config.Config{})); diff != "" {
		t.Errorf("FromEnv mismatch (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestValidateNamesTheVariableAtFault(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"NoTable", config.Config{}, config.EnvTable + " is required"},
		{"EmptyFileTable", config.Config{Table: "file:"}, config.EnvTable + " is required"},
		{"EmptyFileBucket", config.Config{Table: "t", Bucket: "file:"}, config.EnvBucket},
		{"BadTenant", config.Config{Table: "t", AnonymousTenant: "Not A Tenant"}, config.EnvAnonymousTenant},
		{"BadOrigin", config.Config{Table: "t", AllowedOrigins: []string{"app.example.com"}}, config.EnvAllowedOrigins},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestPipelineArnIsReadAndChecked(t *testing.T) {
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:switchboard-RagPipeline"
	cfg := config.FromEnv(func(k string) string {
		return map[string]string{config.EnvTable: "t", config.EnvPipelineARN: arn}[k]
	})
	if cfg.PipelineARN != arn {
		t.Errorf("PipelineARN = %q, want %q", cfg.PipelineARN, arn)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	cfg.PipelineARN = "switchboard-RagPipeline"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), config.EnvPipelineARN) {
		t.Errorf("Validate of a name that is no ARN: %v, want an error naming %s", err, config.EnvPipelineARN)
	}
}
