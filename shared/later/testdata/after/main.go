// Command after is a Lambda function for the tests of package later: it
// answers at once and queues work that waits for the file $AFTER_DIR/go to
// exist, then writes $AFTER_DIR/done-<request id>. With AFTER_HOLD set, its
// queue holds the environment until that work is done.
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/switchboard-dev/switchboard/shared/later"
)

type handler struct {
	q   *later.Queue
	dir string
}

func (h handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	lc, _ := lambdacontext.FromContext(ctx)
	h.q.Go(ctx, 20*time.Second, func(ctx context.Context) {
		for {
			if _, err := os.Stat(filepath.Join(h.dir, "go")); err == nil {
				break
			} else if !errors.Is(err, os.ErrNotExist) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		os.WriteFile(filepath.Join(h.dir, "done-"+lc.AwsRequestID), nil, 0o600)
	})
	return payload, nil
}

func main() {
	q := later.New()
	if os.Getenv("AFTER_HOLD") != "" {
		if err := q.Hold(os.Getenv("AWS_LAMBDA_RUNTIME_API")); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
	}
	lambda.StartWithOptions(q.Handler(handler{q, os.Getenv("AFTER_DIR")}), lambda.WithEnableSIGTERM(func() {}))
}
