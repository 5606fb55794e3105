package gateway_test

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
)

type lambdaHandler = lambda.Handler

// lambdaInvoker returns the AWS invoker pointed at a server speaking the Lambda Invoke API.
func lambdaInvoker(url string) *lambdaapi.Invoker {
	return lambdaapi.New(aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	}, "sb-")
}
