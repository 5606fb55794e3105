//go:build lambda.norpc

package config

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// loadAWS is [lambdaAWS] in a bootstrap, which runs only inside Lambda.
func loadAWS(_ context.Context, getenv func(string) string) (aws.Config, error) {
	return lambdaAWS(getenv), nil
}
