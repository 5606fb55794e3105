// Command hello is the anchor of bench-coldstart: the smallest aws-lambda-go
// bootstrap, which answers every event with "hello". A function's cold start
// is measured as what it adds to this one's.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "hello", nil })
}
