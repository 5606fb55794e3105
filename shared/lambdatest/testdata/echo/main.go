// Command echo is a Lambda function for the tests of lambdatest: it answers
// each event with the event itself, fails events of the form
// {"fail":"message"}, and exits at init when ECHO_EXIT_AT_INIT is set.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

func main() {
	if os.Getenv("ECHO_EXIT_AT_INIT") != "" {
		os.Stderr.WriteString("echo: told to exit at init\n")
		os.Exit(3)
	}
	lambda.StartWithOptions(func(ctx context.Context, in json.RawMessage) (any, error) {
		var f struct{ Fail string }
		json.Unmarshal(in, &f)
		if f.Fail != "" {
			return nil, errors.New(f.Fail)
		}
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		return map[string]any{"event": in, "request_id": lc.AwsRequestID, "arn": lc.InvokedFunctionArn, "has_deadline": !deadline.IsZero()}, nil
	}, lambda.WithEnableSIGTERM(func() {}))
}
