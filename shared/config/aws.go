package config

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// lambdaAWS returns the AWS configuration of a process inside Lambda, from
// the variables Lambda sets: AWS_REGION, and the execution role's
// credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN (which the SDK's default chain would also read first);
// and from the endpoint overrides the tests and emulators set,
// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>. The bootstraps use it
// instead of the SDK's LoadDefaultConfig, whose packages (shared config
// files, SSO, STS, IMDS) cost about a millisecond of every cold start to
// initialise and then more to run, for sources Lambda never provides;
// AWS_CA_BUNDLE and profiles are among them.
func lambdaAWS(getenv func(string) string) aws.Config {
	cfg := aws.Config{
		Region:        getenv("AWS_REGION"),
		Credentials:   credentials.NewStaticCredentialsProvider(getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")),
		ConfigSources: []any{serviceEndpoints(getenv)},
	}
	if url := getenv("AWS_ENDPOINT_URL"); url != "" {
		cfg.BaseEndpoint = &url
	}
	return cfg
}

// serviceEndpoints gives each service client the endpoint of its
// AWS_ENDPOINT_URL_<SERVICE> variable, as the SDK's environment
// configuration does: <SERVICE> is the service's SDK id, upper case, spaces
// as underscores (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_BEDROCK_RUNTIME).
type serviceEndpoints func(string) string

// GetServiceBaseEndpoint is what the SDK's clients ask of a configuration
// source for their endpoint.
func (e serviceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	url := e("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return url, url != "", nil
}
