package later

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/shutdown"
)

// ExtensionName is the name the queue registers under.
const ExtensionName = "switchboard-later"

// The Extensions API, https://docs.aws.amazon.com/lambda/latest/dg/runtimes-extensions-api.html
// (package shutdown registers extensions).
const (
	maxEventBytes     = 64 << 10
	eventTypeInvoke   = "INVOKE"
	eventTypeShutdown = "SHUTDOWN"
)

// event is the part of an Extensions API event the queue reads.
type event struct {
	EventType  string `json:"eventType"`
	DeadlineMS int64  `json:"deadlineMs"`
	RequestID  string `json:"requestId"`
}

// Hold registers the queue as an internal extension of the Lambda runtime API
// at runtimeAPI (AWS_LAMBDA_RUNTIME_API), so that each invocation's
// environment stays up until the invocation has returned and its work is
// done. It must be called during init, before lambda.Start, and the
// function's handler wrapped with [Queue.Handler] (or call [Queue.Track]).
// With an empty runtimeAPI, outside Lambda, it does nothing.
func (q *Queue) Hold(runtimeAPI string) error {
	if runtimeAPI == "" {
		return nil
	}
	id, err := shutdown.RegisterExtension(runtimeAPI, ExtensionName, []string{eventTypeInvoke})
	if err != nil {
		return err
	}
	q.mu.Lock()
	q.held = true
	q.mu.Unlock()
	// The next event may be minutes away: no timeout.
	go q.serve(&http.Client{}, "http://"+runtimeAPI+shutdown.NextPath, id)
	return nil
}

// serve asks for each next event, which also tells Lambda the previous
// invocation may be frozen, once that invocation has settled.
func (q *Queue) serve(client *http.Client, next, id string) {
	for {
		ev, err := nextEvent(client, next, id)
		if err != nil || ev.EventType == eventTypeShutdown {
			return // the environment is going away; there is no one left to tell
		}
		if ev.EventType == eventTypeInvoke {
			q.settle(ev.RequestID, time.UnixMilli(ev.DeadlineMS))
		}
	}
}

func nextEvent(client *http.Client, url, id string) (event, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return event{}, err
	}
	req.Header.Set(shutdown.HeaderIdentifier, id)
	res, err := client.Do(req)
	if err != nil {
		return event{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxEventBytes))
	if err != nil {
		return event{}, err
	}
	if res.StatusCode != http.StatusOK {
		return event{}, fmt.Errorf("next extension event: the runtime API answered %s", res.Status)
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		return event{}, fmt.Errorf("next extension event: %w", err)
	}
	return ev, nil
}

// Handler wraps h so that each invocation is tracked ([Queue.Track]) from
// before its payload is read to after its answer is made.
func (q *Queue) Handler(h lambda.Handler) lambda.Handler { return tracked{q, h} }

type tracked struct {
	q *Queue
	h lambda.Handler
}

func (t tracked) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	defer t.q.Track(ctx)()
	return t.h.Invoke(ctx, payload)
}
