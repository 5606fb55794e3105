//go:build !lambda.norpc

package config

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// loadAWS loads the SDK's default configuration (the environment, shared
// config files and profiles, SSO, IMDS), for the local server and the
// scripts, which may run anywhere. It reads the process's environment.
func loadAWS(ctx context.Context, _ func(string) string) (aws.Config, error) {
	return awsconfig.LoadDefaultConfig(ctx)
}
