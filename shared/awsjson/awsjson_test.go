package awsjson

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestAHostPrefixGoesOnlyBeforeTheRegionalEndpoint(t *testing.T) {
	local := aws.String("http://127.0.0.1:8083/")
	tests := []struct {
		name string
		api  API
		cfg  aws.Config
		want string
	}{
		{"the regional endpoint", StepFunctionsSync, aws.Config{Region: "eu-west-1"}, "https://sync-states.eu-west-1.amazonaws.com"},
		{"in China", StepFunctionsSync, aws.Config{Region: "cn-north-1"}, "https://sync-states.cn-north-1.amazonaws.com.cn"},
		{"an endpoint configured in its place", StepFunctionsSync, aws.Config{Region: "eu-west-1", BaseEndpoint: local}, "http://127.0.0.1:8083"},
		{"an API without a prefix", SSM, aws.Config{Region: "eu-west-1"}, "https://ssm.eu-west-1.amazonaws.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.api.endpoint(&tc.cfg); got != tc.want {
				t.Errorf("endpoint = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRetryEndsWithTheContextsErrorIfItEndsWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	throttled := errors.New("ThrottlingException")
	calls := 0
	err := Retry(ctx, func() (bool, error) {
		calls++
		cancel()
		return true, throttled
	})
	if calls != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, throttled) {
		t.Errorf("Retry = %v after %d calls; want context.Canceled wrapping the throttling, after one call", err, calls)
	}
}

// An answer whose body breaks off after its status: a success means the
// action was done, so it is not tried again; a failure may be.
func TestABrokenAnswerIsRetriedOnlyIfItsStatusIsAFailure(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusInternalServerError} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(status)
			w.Write([]byte(`{"status":`)) // and the connection closes, 90 bytes short
		}))
		cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
		retry, err := Call(t.Context(), &cfg, StepFunctionsSync, "StartSyncExecution", map[string]string{}, nil, 1<<20)
		srv.Close()
		if err == nil || retry != (status != http.StatusOK) {
			t.Errorf("status %d, body cut short: Call = %v, %v; want an error, retry %v", status, retry, err, status != http.StatusOK)
		}
	}
}

// Waits on a fixed schedule would bring back together the writers a
// throttled table turned away together: each wait is drawn from the whole
// range below its bound, which is ten times longer after throttling.
func TestEachWaitBetweenTriesIsDrawnFromBelowItsBound(t *testing.T) {
	tests := []struct {
		attempt    int
		throttling bool
		bound      time.Duration
	}{
		{1, false, 100 * time.Millisecond},
		{2, false, 200 * time.Millisecond},
		{1, true, time.Second},
		{2, true, 2 * time.Second},
	}
	for _, tt := range tests {
		lowest, highest := tt.bound, time.Duration(0)
		for range 1000 {
			d := backoff(tt.attempt, tt.throttling)
			if d < 0 || d >= tt.bound {
				t.Fatalf("backoff(%d, %v) = %v, want in [0, %v)", tt.attempt, tt.throttling, d, tt.bound)
			}
			lowest, highest = min(lowest, d), max(highest, d)
		}
		// With 1000 uniform draws, each end is missed with odds of 0.75^1000.
		if lowest > tt.bound/4 || highest < tt.bound*3/4 {
			t.Errorf("backoff(%d, %v) drew from [%v, %v] only, want the whole of [0, %v)", tt.attempt, tt.throttling, lowest, highest, tt.bound)
		}
	}
}

func TestThrottlingIsToldFromOtherFailures(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&Error{Code: "ThrottlingException", Status: 400}, true},
		{&Error{Code: "ProvisionedThroughputExceededException", Status: 400}, true},
		{&Error{Code: "TooManyRequests", Status: http.StatusTooManyRequests}, true},
		{fmt.Errorf("wrapped: %w", &Error{Code: "RequestLimitExceeded", Status: 400}), true},
		{&Error{Code: "InternalServerError", Status: 500}, false},
		{&Error{Code: "TransactionInProgressException", Status: 400}, false},
		{errors.New("connection reset"), false},
	}
	for _, tt := range tests {
		if got := throttled(tt.err); got != tt.want {
			t.Errorf("throttled(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// An error answer is retried when its status or its code says that the same
// call may pass later, as the SDK's standard retryer has it.
func TestAnErrorIsRetriedWhenItsStatusOrCodeSaysItMayPass(t *testing.T) {
	tests := []struct {
		status int
		code   string
		retry  bool
	}{
		{http.StatusBadRequest, "ProvisionedThroughputExceededException", true},
		{http.StatusBadRequest, "ThrottlingException", true},
		{http.StatusBadRequest, "RequestLimitExceeded", true},
		{http.StatusBadRequest, "TransactionInProgressException", true},
		{http.StatusInternalServerError, "InternalServerError", true},
		{http.StatusServiceUnavailable, "ServiceUnavailable", true},
		{http.StatusBadRequest, "ConditionalCheckFailedException", false},
		{http.StatusBadRequest, "ValidationException", false},
		{http.StatusBadRequest, "TransactionConflictException", false},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"no"}`, tc.code)
			}))
			defer srv.Close()
			cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
				Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
			retry, err := Call(t.Context(), &cfg, DynamoDB, "GetItem", map[string]string{}, nil, 1<<10)
			if !IsCode(err, tc.code) || retry != tc.retry {
				t.Errorf("Call = %v, %v; want %s, retry %v", retry, err, tc.code, tc.retry)
			}
		})
	}
}

// A service's error type comes with or without its namespace, and with
// detail after a colon; the code is the part between.
func TestAnErrorsCodeIsReadFromEachFormOfItsType(t *testing.T) {
	for _, typ := range []string{
		"ConditionalCheckFailedException",
		"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
		"aws.protocoltests#ConditionalCheckFailedException:http://internal.amazon.com/coral/",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":%q,"message":"%s"}`, typ, strings.Repeat("m", 2*maxMessage))
		}))
		cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
		_, err := Call(t.Context(), &cfg, DynamoDB, "PutItem", map[string]string{}, nil, 1<<20)
		srv.Close()
		if !IsCode(err, "ConditionalCheckFailedException") {
			t.Errorf("__type %q: Call = %v, want ConditionalCheckFailedException", typ, err)
		}
		if err != nil && len(err.Error()) > maxMessage+100 {
			t.Errorf("__type %q: the error's text is %d bytes, want the message cut to %d", typ, len(err.Error()), maxMessage)
		}
	}
}

// An answer over the limit fails a call that reads it, but not a call that
// succeeded and reads nothing of it: its action was done.
func TestAnAnswerOverTheLimitFailsOnlyTheCallsThatReadIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"ConsumedCapacity":%q}`, strings.Repeat("x", 4<<10))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
	if _, err := Call(t.Context(), &cfg, DynamoDB, "PutItem", map[string]string{}, nil, 1<<10); err != nil {
		t.Errorf("a write whose answer is over the limit: %v, want done", err)
	}
	var out map[string]any
	if _, err := Call(t.Context(), &cfg, DynamoDB, "GetItem", map[string]string{}, &out, 1<<10); err == nil {
		t.Error("a read whose answer is over the limit succeeded, want an error")
	}
}
