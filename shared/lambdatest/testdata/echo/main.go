// Command echo is a Lambda function for the tests of lambdatest: it answers
// each event with the event itself, fails events of the form
// {"fail":"message"}, and exits at init when ECHO_EXIT_AT_INIT is set.
// An event {"stream":["a","b"],"release":"/some/file"} is answered streamed:
// "a", then, once the file exists, "b" ("timeout" if it does not appear
// within 30 s); with "fail_midway":"message" the stream fails after "a".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

func main() {
	if os.Getenv("ECHO_EXIT_AT_INIT") != "" {
		os.Stderr.WriteString("echo: told to exit at init\n")
		os.Exit(3)
	}
	lambda.StartWithOptions(func(ctx context.Context, in json.RawMessage) (any, error) {
		var f struct {
			Fail, Release string
			FailMidway    string `json:"fail_midway"`
			Stream        []string
		}
		json.Unmarshal(in, &f)
		if f.Fail != "" {
			return nil, errors.New(f.Fail)
		}
		if len(f.Stream) > 0 {
			return stream(f.Stream, f.Release, f.FailMidway), nil
		}
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		return map[string]any{"event": in, "request_id": lc.AwsRequestID, "arn": lc.InvokedFunctionArn, "has_deadline": !deadline.IsZero()}, nil
	}, lambda.WithEnableSIGTERM(func() {}))
}

// stream answers pieces as a stream, each after the first once release exists.
func stream(pieces []string, release, failMidway string) io.Reader {
	r, w := io.Pipe()
	go func() {
		for i, p := range pieces {
			if i > 0 && !wait(release) {
				p = "timeout"
			}
			w.Write([]byte(p))
			if failMidway != "" {
				w.CloseWithError(errors.New(failMidway))
				return
			}
		}
		w.Close()
	}()
	return r
}

// wait reports whether the file at path appears within 30 s.
func wait(path string) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}
