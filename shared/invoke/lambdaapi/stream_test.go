package lambdaapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/eventstream"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
)

// message is one event stream message of an InvokeWithResponseStream answer.
func message(messageType, name, payload string) eventstream.Message {
	m := eventstream.Message{Payload: []byte(payload)}
	m.Headers.Set(lambdaapi.HeaderMessageType, eventstream.StringValue(messageType))
	switch messageType {
	case "event":
		m.Headers.Set(lambdaapi.HeaderEventType, eventstream.StringValue(name))
	case "exception":
		m.Headers.Set(lambdaapi.HeaderExceptionType, eventstream.StringValue(name))
	}
	return m
}

func chunk(s string) eventstream.Message { return message("event", lambdaapi.EventPayloadChunk, s) }

func complete(s string) eventstream.Message {
	return message("event", lambdaapi.EventInvokeComplete, s)
}

func TestAStreamedInvocationReadsTheEventStream(t *testing.T) {
	p1 := 1.0
	frame, _ := invoke.AppendFrame(nil, invoke.Notification{Progress: &p1})
	half := len(frame) / 2
	for _, tc := range []struct {
		name     string
		messages []eventstream.Message
		payload  string
		notes    int
		err      string // in the error's text
		errType  string // of the function's error
	}{
		{name: "Frames split across chunks, then the response", messages: []eventstream.Message{
			chunk(string(frame[:half])), chunk(string(frame[half:]) + `{"result":`), message("event", "SomethingNew", "x"), chunk(`{}}`), complete(`{}`),
		}, payload: `{"result":{}}`, notes: 1},
		{name: "A failure with the Runtime API's error as its details", messages: []eventstream.Message{
			chunk(string(frame)), complete(`{"ErrorCode":"Unhandled","ErrorDetails":"{\"errorType\":\"Runtime.Panic\",\"errorMessage\":\"boom\"}"}`),
		}, notes: 1, errType: "Runtime.Panic", err: "boom"},
		{name: "A failure with its message as its details", messages: []eventstream.Message{
			complete(`{"ErrorCode":"Sandbox.Timedout","ErrorDetails":"Task timed out"}`),
		}, errType: "Sandbox.Timedout", err: "Task timed out"},
		{name: "An exception message", messages: []eventstream.Message{message("exception", "ServiceException", "it broke")}, err: "ServiceException"},
		{name: "A stream without its InvokeComplete", messages: []eventstream.Message{chunk(`{"result":{}}`)}, err: "ended before its InvokeComplete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				body, _ := io.ReadAll(r.Body)
				if !strings.Contains(string(body), `"stream":true`) {
					t.Errorf("the request %s does not ask for a stream", body)
				}
				w.Header().Set("Content-Type", lambdaapi.EventStreamType)
				enc := eventstream.NewEncoder()
				for _, m := range tc.messages {
					enc.Encode(w, m)
				}
			}))
			defer srv.Close()
			inv := lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}, "sb-")
			notes := 0
			out, err := inv.InvokeStream(context.Background(), "vector/document_ingest", request(), func(invoke.Notification) { notes++ })
			if want := "/2021-11-15/functions/sb-vector-document-ingest/response-streaming-invocations"; path != want {
				t.Errorf("invoked %s, want %s", path, want)
			}
			if notes != tc.notes {
				t.Errorf("%d notifications, want %d", notes, tc.notes)
			}
			if tc.err == "" {
				if err != nil || string(out) != tc.payload {
					t.Errorf("InvokeStream: %s, %v; want %s", out, err, tc.payload)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("InvokeStream error %v, want one saying %q", err, tc.err)
			}
			var fe *invoke.FunctionError
			if got := ""; errors.As(err, &fe) {
				got = fe.Type
				if diff := cmp.Diff(tc.errType, got); diff != "" {
					t.Errorf("function error type mismatch (-want +got):\n%s", diff)
				}
			} else if tc.errType != "" {
				t.Errorf("error %v is not the function's", err)
			}
		})
	}
}

func TestAStreamedInvocationTheAPIRefusesIsAnAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"Type":"User","message":"Function not found"}`))
	}))
	defer srv.Close()
	inv := lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}, "sb-")
	_, err := inv.InvokeStream(context.Background(), "vector/document_ingest", request(), func(invoke.Notification) {})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("InvokeStream error %v, want the API's", err)
	}
}
