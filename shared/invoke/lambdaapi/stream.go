package lambdaapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/eventstream"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// InvokeStream implements [invoke.StreamInvoker] through the Lambda
// InvokeWithResponseStream API, POST
// /2021-11-15/functions/{name}/response-streaming-invocations (which
// lambda:InvokeFunction allows): its answer, of type
// application/vnd.amazon.eventstream, is a series of PayloadChunk events,
// the bytes the function wrote as it wrote them, ended by an InvokeComplete
// event whose ErrorCode and ErrorDetails report a function that failed,
// before or after it began to answer. The request is retried as Invoke's is
// until its answer begins; the function's bytes are read as a streamed
// answer ([invoke.ReadStream]).
func (l *Invoker) InvokeStream(ctx context.Context, function string, req *invoke.Request, onNote func(invoke.Notification)) ([]byte, error) {
	streamed := *req
	streamed.Stream = true
	payload, err := invoke.Encode(&streamed)
	if err != nil {
		return nil, err
	}
	name := l.prefix + invoke.FunctionName(function)
	var resp *http.Response
	err = l.retrying(ctx, func() (err error) {
		resp, err = l.send(ctx, "/2021-11-15/functions/"+url.PathEscape(name)+"/response-streaming-invocations", payload, callcontext.TraceHeader(ctx, req.TraceID))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("invoke: lambda %s: %w", name, err)
	}
	defer resp.Body.Close()
	if ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); ct != EventStreamType {
		return nil, fmt.Errorf("invoke: lambda %s: the response stream is of type %q, not %s", name, ct, EventStreamType)
	}
	out, err := invoke.ReadStream(&EventReader{Body: resp.Body}, onNote)
	var failed *StreamError
	switch {
	case errors.As(err, &failed):
		return nil, &invoke.FunctionError{Function: function, Type: failed.Code, Message: failed.Details}
	case err != nil:
		return nil, fmt.Errorf("invoke: lambda %s: reading the response stream: %w", name, err)
	}
	return out, nil
}

// EventStreamType is the content type of an InvokeWithResponseStream answer.
const EventStreamType = "application/vnd.amazon.eventstream"

// The event stream headers of InvokeWithResponseStream's events.
const (
	HeaderMessageType   = ":message-type"
	HeaderEventType     = ":event-type"
	HeaderContentType   = ":content-type"
	HeaderExceptionType = ":exception-type"
	HeaderErrorCode     = ":error-code"
	HeaderErrorMessage  = ":error-message"
)

// The events of InvokeWithResponseStream's answer.
const (
	EventPayloadChunk   = "PayloadChunk"
	EventInvokeComplete = "InvokeComplete"
)

// InvokeComplete is the payload of the InvokeComplete event, as JSON.
type InvokeComplete struct {
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorDetails string `json:"ErrorDetails,omitempty"`
	LogResult    string `json:"LogResult,omitempty"`
}

// StreamError is a function's failure an InvokeComplete event reports:
// Code is its error type, Details its message.
type StreamError struct{ Code, Details string }

func (e *StreamError) Error() string { return e.Code + ": " + e.Details }

// EventReader reads the bytes a function wrote from the body of an
// InvokeWithResponseStream answer, decoded with smithy-go's event stream
// decoder: the payloads of its PayloadChunk events, in order, to its
// InvokeComplete event, where it ends (io.EOF), or fails with a
// [*StreamError] if that event reports one. An exception message is a
// [smithy.GenericAPIError]; a body that ends before InvokeComplete, an
// error. Events of other types are skipped.
type EventReader struct {
	Body io.Reader

	dec   *eventstream.Decoder
	chunk []byte // what is left of the current PayloadChunk
	err   error
}

// Read implements [io.Reader].
func (e *EventReader) Read(p []byte) (int, error) {
	for len(e.chunk) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		e.err = e.next()
	}
	n := copy(p, e.chunk)
	e.chunk = e.chunk[n:]
	return n, nil
}

// next decodes the next message: a chunk to hand out, or the end.
func (e *EventReader) next() error {
	if e.dec == nil {
		e.dec = eventstream.NewDecoder()
	}
	msg, err := e.dec.Decode(e.Body, nil)
	if errors.Is(err, io.EOF) {
		return errors.New("the response stream ended before its InvokeComplete event")
	}
	if err != nil {
		return err
	}
	switch header(msg, HeaderMessageType) {
	case "event":
	case "exception":
		return &smithy.GenericAPIError{Code: header(msg, HeaderExceptionType), Message: string(msg.Payload), Fault: smithy.FaultServer}
	case "error":
		return &smithy.GenericAPIError{Code: header(msg, HeaderErrorCode), Message: header(msg, HeaderErrorMessage), Fault: smithy.FaultServer}
	default:
		return fmt.Errorf("the response stream has a message of type %q", header(msg, HeaderMessageType))
	}
	switch header(msg, HeaderEventType) {
	case EventPayloadChunk:
		e.chunk = msg.Payload
	case EventInvokeComplete:
		var c InvokeComplete
		if err := json.Unmarshal(msg.Payload, &c); err != nil {
			return fmt.Errorf("undecodable InvokeComplete event: %w", err)
		}
		if c.ErrorCode == "" && c.ErrorDetails == "" {
			return io.EOF
		}
		return streamError(c)
	}
	return nil
}

// streamError reads the failure an InvokeComplete event reports: its
// details may be the function's error as the Runtime API took it
// ({"errorType":…,"errorMessage":…}), or the message alone.
func streamError(c InvokeComplete) *StreamError {
	var reported struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(c.ErrorDetails), &reported) == nil && reported.Message != "" {
		if reported.Type == "" {
			reported.Type = c.ErrorCode
		}
		return &StreamError{Code: reported.Type, Details: reported.Message}
	}
	return &StreamError{Code: c.ErrorCode, Details: c.ErrorDetails}
}

// header returns msg's string header name, or "".
func header(msg eventstream.Message, name string) string {
	if v := msg.Headers.Get(name); v != nil {
		return v.String()
	}
	return ""
}
