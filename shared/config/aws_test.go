package config

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
)

// A bootstrap's AWS configuration is what Lambda sets, and the endpoint
// overrides the tests and emulators set reach the clients as the SDK's own
// environment configuration would have them.
func TestABootstrapsAWSConfigurationComesFromLambdasVariables(t *testing.T) {
	env := map[string]string{
		"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",
	}
	cfg := lambdaAWS(func(k string) string { return env[k] })
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "eu-west-1" || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("region %q, credentials %+v: want Lambda's", cfg.Region, creds)
	}
	if got := dynamoDBEndpoint(cfg); got != "http://127.0.0.1:8000" {
		t.Errorf("DynamoDB's endpoint is %q, want AWS_ENDPOINT_URL_DYNAMODB's", got)
	}
	if got := awslambda.NewFromConfig(cfg).Options().BaseEndpoint; got != nil {
		t.Errorf("the Lambda client's endpoint is %q, want the service's own (none set)", *got)
	}
	env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000"
	cfg = lambdaAWS(func(k string) string { return env[k] })
	if got := aws.ToString(awslambda.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://127.0.0.1:9000" {
		t.Errorf("with AWS_ENDPOINT_URL, the Lambda client's endpoint is %q", got)
	}
	if got := dynamoDBEndpoint(cfg); got != "http://127.0.0.1:8000" {
		t.Errorf("with AWS_ENDPOINT_URL too, DynamoDB's endpoint is %q, want its own variable's", got)
	}
}

// dynamoDBEndpoint is the endpoint shared/store/dynamo calls DynamoDB at.
func dynamoDBEndpoint(cfg aws.Config) string {
	return awsjson.ServiceEndpoint(cfg, awsjson.DynamoDB.SDKID, awsjson.DynamoDB.SigningName)
}
